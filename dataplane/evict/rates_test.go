package evict

import (
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
)

// TestRates: a connection that carried a burst long ago and one that
// carries a steady trickle, sampled once a second (with the clock given,
// so the test does not wait): over the window the burst is idle and the
// trickle is the faster, where over their lives the burst would be; a
// connection younger than the window is measured over its life; one that
// left the table is forgotten at the next sample.
func TestRates(t *testing.T) {
	tab := flows.NewTable()
	burst := &flows.Flow{Virtual: "v", Closer: func(bool) {}}
	steady := &flows.Flow{Virtual: "v", Closer: func(bool) {}}
	tab.Add(burst)
	tab.Add(steady)
	c0 := burst.Created().UnixNano()
	var r Rates
	s := int64(time.Second)
	for i := int64(1); i <= 10; i++ {
		if i == 1 {
			burst.BytesIn.Store(10 << 20)
		}
		steady.BytesIn.Store(uint64(i * 1000))
		r.Sample(tab, c0+i*s)
	}
	now := c0 + 10*s
	for _, c := range []struct {
		name     string
		f        *flows.Flow
		created  int64
		min, max float64
	}{
		{"burst long ago: idle now", burst, c0, 0, 0},
		{"steady trickle", steady, c0, 999, 1001},
		// Created 3 s before now: younger than the window, so over its
		// life (bytes over 3 s), whatever its samples say.
		{"young: over its life", steady, now - 3*s, 3333, 3334},
	} {
		t.Run(c.name, func(t *testing.T) {
			r.mu.Lock()
			got := r.rateLocked(c.f, flowBytes(c.f), c.created, now)
			r.mu.Unlock()
			if got < c.min || got > c.max {
				t.Errorf("rate %.1f, want %.0f to %.0f", got, c.min, c.max)
			}
		})
	}

	// bias-fast over the window picks the trickle, not the old burst;
	// over their lives it would pick the burst.
	cand := func(f *flows.Flow, recent bool) Candidate {
		c := Candidate{Age: time.Duration(now - c0), Bytes: flowBytes(f)}
		if recent {
			r.mu.Lock()
			c.Rate, c.HasRate = r.rateLocked(f, c.Bytes, c0, now), true
			r.mu.Unlock()
		}
		return c
	}
	p := Policy{BiasFast: true}
	if got := p.Choose([]Candidate{cand(burst, true), cand(steady, true)}, 1); len(got) != 1 || got[0] != 1 {
		t.Errorf("bias-fast over the window chose %v, want the steady one (1)", got)
	}
	if got := p.Choose([]Candidate{cand(burst, false), cand(steady, false)}, 1); len(got) != 1 || got[0] != 0 {
		t.Errorf("bias-fast over the lives chose %v, want the burst (0)", got)
	}
	// slow-flow: the burst is slow over the window.
	sl := &SlowFlow{Threshold: 100}
	if b := cand(burst, true); !sl.slow(b.Age, b.rate()) {
		t.Errorf("the old burst is not a slow flow over the window")
	}

	// Without samples (r nil) the rate is over the life.
	if got := (*Rates)(nil).rateLocked(burst, 10<<20, c0, now); got < 1<<20-1 || got > 1<<20+1 {
		t.Errorf("no samples: rate %.0f, want %d", got, 1<<20)
	}

	tab.Remove(burst)
	r.Sample(tab, now+s)
	if n := r.Len(); n != 1 {
		t.Errorf("%d histories after the burst left, want 1", n)
	}
}
