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
	// evicted, and how many it reset (counted on the virtuals they
	// belong to by Sweep itself).
	Sweep func(high, low int) (live, evicted int)
	// Refused, when not nil, counts the clients refused with nothing
	// left to evict (the context's EvictionCounts).
	Refused *atomic.Uint64
}

// EvictContext is a route domain's or the global flow-eviction context
// (net route-domain connection-limit and flow-eviction-policy; ltm
// global-settings connection global-flow-eviction-policy): the
// connections of the virtuals in it, measured against its Limit. The
// virtuals in one share it for one commit; a virtual in none has a nil
// Contexts, one nil check per new connection.
type EvictContext struct {
	// Name is the route domain's name, or "global".
	Name string
	// Limit is the context's connection-limit (0: none); High and Low
	// its policy's marks, or 0 without a policy, when Limit alone
	// refuses.
	Limit, High, Low int
	// Count is how many connections the context holds now.
	Count func() int
	// Sweep is one eviction round over the context's connections (nil
	// without a policy), as Evictor.Sweep.
	Sweep func(high, low int) (live, evicted int)
	mu    sync.Mutex
	// Refused counts the clients the context turned away, kept across
	// commits by the plane (the context's EvictionCounts); nil counts
	// nothing.
	Refused *atomic.Uint64
}

// refused counts one client the context turned away.
func (c *EvictContext) refused() {
	if c.Refused != nil {
		c.Refused.Add(1)
	}
}

// admit is the context's say on a new connection: under its high-water
// mark (or its limit, without a policy) yes; at it, one round evicts
// down to the low-water mark, and the client is admitted when the round
// left room [M: the count is read, not reserved, so clients arriving
// together may pass the mark by a few until the next round].
func (c *EvictContext) admit() bool {
	n := c.Count()
	if c.Sweep == nil {
		if c.Limit > 0 && n >= c.Limit {
			c.refused()
			return false
		}
		return true
	}
	if n < c.High {
		return true
	}
	c.mu.Lock()
	live, ev := c.Sweep(c.High, c.Low)
	c.mu.Unlock()
	if live-ev >= c.High {
		c.refused()
		return false
	}
	return true
}

// Eviction is what a virtual keeps across commits for its eviction
// policy: one round at a time, and the connections evicted.
type Eviction struct {
	mu sync.Mutex
	// Evicted counts the connections the policy reset (show ltm virtual:
	// Evicted Connections).
	Evicted atomic.Uint64
	// SlowFlows is how many of the virtual's connections its policy's
	// slow-flow found slow at its last check; SlowKilled counts those
	// its throttling reset.
	SlowFlows  atomic.Int64
	SlowKilled atomic.Uint64
	// Refused counts the virtual's clients turned away because an
	// eviction context (its own with a policy, its route domain's, the
	// global one) was full and a round freed no place.
	Refused atomic.Uint64
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
	if live-n >= ev.High {
		vs.Evict.Refused.Add(1)
		if ev.Refused != nil {
			ev.Refused.Add(1)
		}
		return false
	}
	// Counted without raising Maximum Connections: the evicted
	// connections are reset already, only their ends are still to be
	// counted.
	vs.Stats.Cur.Add(1)
	vs.Stats.Tot.Add(1)
	return true
}

// admitContexts asks each context in turn; the first that refuses ends
// it, counted on the virtual too.
func (vs *Virtual) admitContexts(cs []*EvictContext) bool {
	for _, c := range cs {
		if !c.admit() {
			vs.Evict.Refused.Add(1)
			return false
		}
	}
	return true
}
