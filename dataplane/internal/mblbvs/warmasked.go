package mblbvs

import (
	"net/netip"
	"sync"
	"time"
)

// A pool's min-conn on a virtual whose clients reach many ports (every
// port, a port list) or addresses keeps connections open ahead of need
// to a member that follows the client (at port any, translate-port or
// translate-address disabled) on each destination clients asked for
// lately, as they come: warmAsked remembers the last maxWarmDests
// destinations, each for warmAskedFor after its last client [M: the
// bounds are ours; BIG-IP documents no per-port min-conn], and
// warmMembers lists such a member once per destination.

// maxWarmDests bounds the destinations warmed per virtual [M].
const maxWarmDests = 16

// warmAskedFor is how long a destination is warmed after its last
// client [M].
const warmAskedFor = 5 * time.Minute

// warmAsked is the destinations clients asked for lately, the latest
// first.
type warmAsked struct {
	mu   sync.Mutex
	list []askedDest
}

type askedDest struct {
	to netip.AddrPort
	at time.Time
}

// note records a client's destination.
func (w *warmAsked) note(to netip.AddrPort, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, d := range w.list {
		if d.to == to {
			copy(w.list[1:i+1], w.list[:i])
			w.list[0] = askedDest{to, now}
			return
		}
	}
	if len(w.list) < maxWarmDests {
		w.list = append(w.list, askedDest{})
	}
	copy(w.list[1:], w.list[:len(w.list)-1])
	w.list[0] = askedDest{to, now}
}

// dests is the destinations asked for within warmAskedFor of now, the
// latest first; older ones are forgotten.
func (w *warmAsked) dests(now time.Time) []netip.AddrPort {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, d := range w.list {
		if now.Sub(d.at) < warmAskedFor {
			w.list[n] = d
			n++
		}
	}
	w.list = w.list[:n]
	out := make([]netip.AddrPort, n)
	for i, d := range w.list {
		out[i] = d.to
	}
	return out
}
