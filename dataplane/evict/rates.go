package evict

import (
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
)

// RateWindow is the span over which bias-fast, bias-slow and slow-flow
// measure a connection's rate: its bytes over the last few seconds, so
// that a connection that was fast once and is idle now ranks as slow
// [M: F5 does not say over which span it measures a flow's rate; five
// seconds is openltm's choice]. A connection younger than the window is
// measured over its life.
const RateWindow = 5 * time.Second

// rateSamples is how many samples a connection keeps: one a second over
// the window and one more, so that the oldest is at the window's start.
const rateSamples = 6

// Rates keeps each connection's byte count as sampled once a second (by
// the plane, while a policy in use ranks or judges by rate), so that a
// round measures the connection's recent rate, not its rate since it
// opened. The zero value is ready; nothing is kept until Sample runs, and
// a connection with no sample in the window is measured over its life.
type Rates struct {
	mu   sync.Mutex
	hist map[*flows.Flow]*rateHist
	gen  uint64
}

// rateHist is one connection's last samples, a ring.
type rateHist struct {
	at    [rateSamples]int64
	bytes [rateSamples]uint64
	n     int // samples held
	next  int // where the next goes
	gen   uint64
}

// flowBytes is the bytes f carried, both sides, both ways.
func flowBytes(f *flows.Flow) uint64 {
	b := f.BytesIn.Load() + f.BytesOut.Load()
	for _, l := range f.Legs() {
		b += l.BytesIn.Load() + l.BytesOut.Load()
	}
	return b
}

// Sample records the byte count of every connection in t at now (Unix
// nanoseconds) and forgets the connections no longer in it. One walk of
// the table; a connection's history is made once, at its first sample.
func (r *Rates) Sample(t *flows.Table, now int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hist == nil {
		r.hist = map[*flows.Flow]*rateHist{}
	}
	r.gen++
	t.Each(func(f *flows.Flow) bool {
		h := r.hist[f]
		if h == nil {
			h = &rateHist{}
			r.hist[f] = h
		}
		h.at[h.next], h.bytes[h.next] = now, flowBytes(f)
		h.next = (h.next + 1) % rateSamples
		h.n = min(h.n+1, rateSamples)
		h.gen = r.gen
		return true
	})
	for f, h := range r.hist {
		if h.gen != r.gen {
			delete(r.hist, f)
		}
	}
}

// rateLocked is f's rate in bytes a second at now, bytes being what it
// carried so far and created when it opened: over the RateWindow when a
// sample of it is that old, else over its life. The caller holds r.mu
// (r may be nil: over its life).
func (r *Rates) rateLocked(f *flows.Flow, bytes uint64, created, now int64) float64 {
	start := now - int64(RateWindow)
	if r != nil && created < start {
		if h := r.hist[f]; h != nil {
			if at, b, ok := h.oldestSince(start); ok && now > at && bytes >= b {
				return float64(bytes-b) / time.Duration(now-at).Seconds()
			}
		}
	}
	if now <= created {
		return 0
	}
	return float64(bytes) / time.Duration(now-created).Seconds()
}

// oldestSince is the oldest sample taken at or after start.
func (h *rateHist) oldestSince(start int64) (at int64, bytes uint64, ok bool) {
	for i := 0; i < h.n; i++ {
		j := (h.next - h.n + i + rateSamples) % rateSamples
		if h.at[j] >= start {
			return h.at[j], h.bytes[j], true
		}
	}
	return 0, 0, false
}

// Len is how many connections have a history, for tests.
func (r *Rates) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.hist)
}
