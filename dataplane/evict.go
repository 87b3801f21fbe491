package dataplane

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/evict"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// EvictionPolicy is an ltm eviction-policy as a virtual acts on it.
type EvictionPolicy = evict.Policy

// EvictionLowPort is one low-priority-port entry of a policy.
type EvictionLowPort = evict.LowPort

// EvictionSlowFlow is a policy's slow-flow.
type EvictionSlowFlow = evict.SlowFlow

// EvictionContext is a route domain's or the global flow-eviction
// context.
type EvictionContext = config.EvictionContext

// evictorOf is the eviction a virtual with a flow-eviction-policy and a
// connection-limit does at its high-water mark (dataplane/evict); nil
// otherwise, so that its connections pay one nil check. The sweep walks
// this plane's connection table for the virtual's connections.
func (p *Plane) evictorOf(vc *Virtual, vs map[string]*state.Virtual) *state.Evictor {
	pol := vc.Eviction
	if pol == nil || vc.ConnectionLimit <= 0 {
		return nil
	}
	high, low := pol.Marks(vc.ConnectionLimit)
	name, table := vc.Name, p.table
	in := func(f *flows.Flow) bool { return f.Virtual == name }
	ctr := p.evictCounter(VirtualContext(name))
	rates := &p.slow.rates
	return &state.Evictor{High: high, Low: low, Refused: &ctr.Refused, Sweep: func(high, low int) (int, int) {
		live, ev := pol.Sweep(table, rates, in, high, low)
		countEvicted(vs, ev, &ctr.Evicted)
		return live, len(ev)
	}}
}

// countEvicted counts each evicted flow on its virtual's Evicted
// Connections, and all of them on the context's n.
func countEvicted(vs map[string]*state.Virtual, ev []*flows.Flow, n *atomic.Uint64) {
	n.Add(uint64(len(ev)))
	for _, f := range ev {
		if v := vs[f.Virtual]; v != nil {
			v.Evict.Evicted.Add(1)
		}
	}
}

// EvictionCounts are what one eviction context (a virtual server's, a
// route domain's, the global one) did since ltmd started, kept across
// commits: the connections its rounds evicted, the slow flows its
// throttling reset and the clients it refused (full, with nothing left
// to evict, or at a route domain's limit without a policy), for show
// ltm eviction-policy, which adds up the contexts that use a policy.
type EvictionCounts struct {
	Evicted, SlowKilled, Refused atomic.Uint64
}

// VirtualContext, RouteDomainContext and GlobalContext are the keys of
// EvictionContextCounts.
func VirtualContext(name string) string     { return "virtual " + name }
func RouteDomainContext(name string) string { return "route-domain " + name }

// GlobalContext is the global context's key.
const GlobalContext = "global"

// evictCounter is the counts of the context key, made on first use.
func (p *Plane) evictCounter(key string) *EvictionCounts {
	c, _ := p.evictCounts.LoadOrStore(key, &EvictionCounts{})
	return c.(*EvictionCounts)
}

// EvictionContextCounts is each eviction context's counts by key
// (VirtualContext, RouteDomainContext, GlobalContext): evicted
// connections, slow flows killed and clients refused.
func (p *Plane) EvictionContextCounts() map[string][3]uint64 {
	out := map[string][3]uint64{}
	p.evictCounts.Range(func(k, v any) bool {
		c := v.(*EvictionCounts)
		out[k.(string)] = [3]uint64{c.Evicted.Load(), c.SlowKilled.Load(), c.Refused.Load()}
		return true
	})
	return out
}

// evictContexts makes cfg's route-domain and global flow-eviction
// contexts for this commit, and gives each virtual of vs (complete,
// this commit's) the ones it is in: a route domain's by its
// destination's route domain id, the global one for all. A context
// with no limit does nothing and is left out.
func (p *Plane) evictContexts(cfg *Config, vs map[string]*state.Virtual) (map[string][]*state.EvictContext, []slowWatch) {
	if len(cfg.EvictionContexts) == 0 {
		return nil, nil
	}
	byVS := map[string][]*state.EvictContext{}
	var watches []slowWatch
	table, rates := p.table, &p.slow.rates
	for _, ec := range cfg.EvictionContexts {
		if ec.Limit <= 0 {
			continue
		}
		var members []*state.Virtual
		names := map[string]bool{}
		for name, vc := range cfg.Virtuals {
			if ec.Global || vc.RouteDomain == ec.RouteDomain {
				members = append(members, vs[name])
				names[name] = true
			}
		}
		if len(members) == 0 {
			continue
		}
		c := &state.EvictContext{Name: ec.Name, Limit: ec.Limit}
		key := RouteDomainContext(ec.Name)
		if ec.Global {
			key = GlobalContext
		}
		ctr := p.evictCounter(key)
		c.Refused = &ctr.Refused
		var in func(f *flows.Flow) bool
		if ec.Global {
			// The whole table: O(1) to count, every flow in it.
			c.Count = table.Len
			in = func(*flows.Flow) bool { return true }
		} else {
			c.Count = func() int {
				n := 0
				for _, v := range members {
					n += int(v.Stats.Cur.Load())
				}
				return n
			}
			in = func(f *flows.Flow) bool { return names[f.Virtual] }
		}
		if pol := ec.Policy; pol != nil {
			c.High, c.Low = pol.Marks(ec.Limit)
			c.Sweep = func(high, low int) (int, int) {
				live, ev := pol.Sweep(table, rates, in, high, low)
				countEvicted(vs, ev, &ctr.Evicted)
				return live, len(ev)
			}
			if pol.NeedsRates() {
				watches = append(watches, slowWatch{pol: pol, in: in, vs: vs, ctr: ctr})
			}
		}
		for name := range names {
			byVS[name] = append(byVS[name], c)
		}
	}
	return byVS, watches
}

// slowWatch is one context (a virtual's, a route domain's, the global
// one) whose policy has slow-flow, bias-fast or bias-slow: the
// connections' rates are sampled while it is in use, and the slow-flow
// check runs over it when it has slow-flow.
type slowWatch struct {
	pol *evict.Policy
	in  func(*flows.Flow) bool
	vs  map[string]*state.Virtual
	// ctr is the context's counts.
	ctr *EvictionCounts
	// virtual is the virtual of a virtual's context, whose Slow Flows
	// the check sets; nil for the others (their slow flows are counted
	// on no virtual's current count [M]).
	virtual *state.Virtual
}

// slowCheckInterval is how often the slow-flow check walks the
// connection table [M: F5 does not say how often it looks].
const slowCheckInterval = time.Second

// slowMonitor samples the connections' byte counts (rates, for the
// recent rates of bias-fast, bias-slow and slow-flow) and runs the
// slow-flow checks of the running commit, once a second while at least
// one policy in use needs rates; it starts with the first commit that
// needs it and stops with the plane. A commit with none leaves it idle:
// no walk, no sample.
type slowMonitor struct {
	mu      sync.Mutex
	watches []slowWatch
	started bool
	stop    chan struct{}
	// rates are the connections' sampled byte counts, which the rounds
	// read.
	rates evict.Rates
}

// set gives the monitor this commit's watches, starting it on first
// need.
func (m *slowMonitor) set(table *flows.Table, w []slowWatch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watches = w
	if len(w) == 0 || m.started {
		return
	}
	m.started = true
	m.stop = make(chan struct{})
	go m.run(table, m.stop)
}

func (m *slowMonitor) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started && m.stop != nil {
		close(m.stop)
		m.stop = nil
	}
	m.watches = nil
}

func (m *slowMonitor) run(table *flows.Table, stop chan struct{}) {
	t := time.NewTicker(slowCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		ws := m.watches
		m.mu.Unlock()
		if len(ws) == 0 {
			continue
		}
		m.rates.Sample(table, time.Now().UnixNano())
		for _, w := range ws {
			if w.pol.Slow == nil {
				continue
			}
			slow, reset := w.pol.SlowCheck(table, &m.rates, w.in)
			if w.virtual != nil {
				w.virtual.Evict.SlowFlows.Store(int64(slow))
			}
			w.ctr.SlowKilled.Add(uint64(len(reset)))
			for _, f := range reset {
				if v := w.vs[f.Virtual]; v != nil {
					v.Evict.SlowKilled.Add(1)
				}
			}
		}
	}
}
