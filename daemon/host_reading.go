package daemon

import (
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/hoststat"
)

// hostSource reads the host and the dataplane for the sampler: the
// processors, the memory, and the counters the dataplane keeps anyway
// (its objects' totals), summed rather than counted again on its paths.
type hostSource struct {
	e     *Engine
	plane atomic.Pointer[dataplane.Plane] // found once, kept
}

// read is one hostReading; what cannot be read is left zero.
func (h *hostSource) read() hostReading {
	var r hostReading
	h.e.cpuLoad.Sample() // cpu usage's averages (hook_rules_ha.go)
	if st, err := hoststat.ReadStat(); err == nil {
		r.cpu = append(r.cpu, st.Total)
		for _, p := range st.Processors {
			r.cpu = append(r.cpu, p.Times)
		}
	}
	if m, err := hoststat.ReadMemory(); err == nil {
		self, _ := hoststat.ReadSelf()
		r.mem = memoryShares(m, self)
	}
	if p := h.find(false); p != nil {
		r.plane = planeTotalsOf(p)
	}
	return r
}

// memoryShares are show sys memory's percentages, each of its row's
// total in the Sys::Host Memory block (hostMemoryRows): ltmd's resident
// memory of what it holds and could still get, the rest of the host's
// use of what ltmd does not hold, and swap.
func memoryShares(m hoststat.Memory, self hoststat.Process) [3]float64 {
	var out [3]float64
	pct := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	out[0] = pct(self.Resident, self.Resident+m.Available)
	out[1] = pct(sub64(m.Used(), self.Resident), sub64(m.Total, self.Resident))
	out[2] = pct(m.SwapUsed(), m.SwapTotal)
	return out
}

func sub64(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// find returns the dataplane the engine follows, or nil. The engine
// keeps it among its hooks only; the first lookup that finds it keeps
// it. The sampler does not wait for a commit holding the engine's lock
// (wait false): it reads the dataplane at a later tick.
func (h *hostSource) find(wait bool) *dataplane.Plane {
	if p := h.plane.Load(); p != nil {
		return p
	}
	e := h.e
	if wait {
		e.mu.Lock()
	} else if !e.mu.TryLock() {
		return nil
	}
	defer e.mu.Unlock()
	for _, hk := range e.hooks {
		if ph, ok := hk.(*planeHook); ok {
			h.plane.Store(ph.p)
			return ph.p
		}
	}
	return nil
}

// planeTotalsOf sums the dataplane's counters: client side over the
// virtual servers, server side over the pools, its connection table's
// size.
func planeTotalsOf(p *dataplane.Plane) *planeTotals {
	t := &planeTotals{conns: uint64(p.ConnectionCount())}
	for _, v := range p.Virtuals() {
		c := v.ClientSide
		t.clientConns += c.TotConns
		t.requests += v.TotRequests
		t.bitsIn, t.bitsOut = t.bitsIn+c.BitsIn, t.bitsOut+c.BitsOut
		t.pktsIn, t.pktsOut = t.pktsIn+c.PktsIn, t.pktsOut+c.PktsOut
	}
	for _, pl := range p.Pools() {
		c := pl.ServerSide
		t.serverConns += c.TotConns
		t.bitsIn, t.bitsOut = t.bitsIn+c.BitsIn, t.bitsOut+c.BitsOut
		t.pktsIn, t.pktsOut = t.pktsIn+c.PktsIn, t.pktsOut+c.PktsOut
	}
	return t
}
