package state

import (
	"sync"
	"sync/atomic"
)

// Evictor is a virtual's flow-eviction-policy as Admit acts on it
// (dataplane/evict): nil for a virtual without one, which then pays one
// nil check for it.
type Evictor struct {
	// High and Low are the policy's water marks as connection counts of
	// the virtual's connection-limit (evict.Policy.Marks).
	High, Low int
	// Sweep is one eviction round over the connection table (the
	// plane's): how many of the virtual's connections it found not yet
	// evicted, and how many it reset.
	Sweep func(high, low int) (live, evicted int)
}

// Eviction is what a virtual keeps across commits for its eviction
// policy: one round at a time, and the connections evicted.
type Eviction struct {
	mu sync.Mutex
	// Evicted counts the connections the policy reset (show ltm virtual:
	// Evicted Connections).
	Evicted atomic.Uint64
}

// admitEvicting is Admit's connection count for a virtual with an
// eviction policy: under the high-water mark the connection is counted;
// at it, a round resets the connections the policy chooses down to the
// low-water mark and the connection is admitted [M: Current
// Connections may pass the connection-limit until the evicted
// connections' ends are counted, which their resets, already sent, make
// short; Maximum Connections is not raised by it]. With nothing left to
// evict (every connection of the virtual already evicted, the count
// lagging behind) the client is admitted too as long as fewer than High
// connections remain; otherwise it is refused, as without a policy.
func (vs *Virtual) admitEvicting(ev *Evictor) bool {
	if vs.Stats.TryOpen(ev.High) {
		return true
	}
	vs.Evict.mu.Lock()
	live, n := ev.Sweep(ev.High, ev.Low)
	vs.Evict.mu.Unlock()
	vs.Evict.Evicted.Add(uint64(n))
	if live-n >= ev.High {
		return false
	}
	// Counted without raising Maximum Connections: the evicted
	// connections are reset already, only their ends are still to be
	// counted.
	vs.Stats.Cur.Add(1)
	vs.Stats.Tot.Add(1)
	return true
}
