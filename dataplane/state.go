package dataplane

import (
	"math"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/lb"
)

// lbModes maps each mode to its algorithm and whether node figures (ratio,
// connections, limit) feed it instead of the member's.
var lbModes = map[LBMode]struct {
	alg    lb.Algorithm
	byNode bool
}{
	"":                             {lb.RoundRobin, false},
	RoundRobin:                     {lb.RoundRobin, false},
	RatioMember:                    {lb.Ratio, false},
	RatioNode:                      {lb.Ratio, true},
	LeastConnectionsMember:         {lb.LeastConns, false},
	LeastConnectionsNode:           {lb.LeastConns, true},
	WeightedLeastConnectionsMember: {lb.WeightedLeastConns, false},
	WeightedLeastConnectionsNode:   {lb.WeightedLeastConns, true},
	RatioLeastConnectionsMember:    {lb.RatioLeastConns, false},
	RatioLeastConnectionsNode:      {lb.RatioLeastConns, true},
	ObservedMember:                 {lb.Observed, false},
	PredictiveMember:               {lb.Predictive, false},
	FastestNode:                    {lb.Fastest, true},
}

func modeNames() []string {
	var out []string
	for m := range lbModes {
		if m != "" {
			out = append(out, string(m))
		}
	}
	sortStrings(out)
	return out
}

// nodeRT is a node's runtime: counters and monitor state shared by every
// member on the node, kept across commits.
type nodeRT struct {
	name        string
	cfg         atomic.Pointer[Node]
	stats       counters
	outstanding atomic.Int64 // requests awaiting an answer (fastest-node)
	watch       *watch
}

func (n *nodeRT) forced() bool   { return n.cfg.Load().State == StateUserDown }
func (n *nodeRT) disabled() bool { return n.cfg.Load().Session == SessionUserDisabled }

// memberRT is a pool member's runtime, keyed by pool and member name so it
// survives commits that keep the member.
type memberRT struct {
	key       string // pool + " " + name
	pool      *poolRT
	name      string
	node      *nodeRT
	cfg       atomic.Pointer[Member]
	stats     counters
	watch     *watch
	rampStart atomic.Int64  // when it last became available (slow ramp)
	smoothed  atomic.Uint64 // float64 bits: connections averaged over picks
}

// avail is how far a member (or node) may take traffic, from its and its
// node's admin states and monitors (reference §3.3). It is the one
// availability decision: load balancing, persistence, a rule's named
// member and LB::status all read it. Worse states are greater.
type avail uint8

const (
	// availUp may be load balanced to.
	availUp avail = iota
	// availDisabled (member or node disabled, or a monitor's
	// recv-disable matched) takes persisted and rule-named clients only.
	availDisabled
	// availDown is marked down by a monitor of the member or its node.
	availDown
	// availForced is forced offline (member or node).
	availForced
)

// availability is the node's own availability.
func (n *nodeRT) availability() avail {
	c := n.cfg.Load()
	switch {
	case c.State == StateUserDown:
		return availForced
	case n.watch.current() == monDown:
		return availDown
	case c.Session == SessionUserDisabled:
		return availDisabled
	}
	return availUp
}

// availability is the member's availability: its own, or its node's when
// that is worse.
func (m *memberRT) availability() avail {
	c := m.cfg.Load()
	a := availUp
	switch {
	case c.State == StateUserDown:
		a = availForced
	case m.watch.current() == monDown:
		a = availDown
	case c.Session == SessionUserDisabled || m.watch.disabled.Load():
		a = availDisabled
	}
	return max(a, m.node.availability())
}

// usable reports whether the member may be load balanced to (limits
// aside).
func (m *memberRT) usable() bool { return m.availability() == availUp }

// statusWord is LB::status's word for an availability.
func (a avail) statusWord() string {
	switch a {
	case availForced, availDown:
		return "down"
	case availDisabled:
		return "session_disabled"
	}
	return "up"
}

// atLimit reports whether the member's or its node's connection limit is
// reached.
func (m *memberRT) atLimit() bool {
	c := m.cfg.Load()
	if c.ConnectionLimit > 0 && m.stats.cur.Load() >= int64(c.ConnectionLimit) {
		return true
	}
	nc := m.node.cfg.Load()
	return nc.ConnectionLimit > 0 && m.node.stats.cur.Load() >= int64(nc.ConnectionLimit)
}

// reserve counts a new connection on the member and its node, respecting
// both limits; it fails when a limit was reached meanwhile.
func (m *memberRT) reserve() bool {
	if !m.stats.tryOpen(m.cfg.Load().ConnectionLimit) {
		return false
	}
	if !m.node.stats.tryOpen(m.node.cfg.Load().ConnectionLimit) {
		m.stats.close()
		m.stats.tot.Add(^uint64(0))
		return false
	}
	return true
}

func (m *memberRT) release() {
	m.stats.close()
	m.node.stats.close()
}

// ramp is the member's slow-ramp share at now (1 when not ramping).
func (m *memberRT) ramp(now int64, rampTime time.Duration) float64 {
	start := m.rampStart.Load()
	if rampTime <= 0 || start == 0 {
		return 1
	}
	el := time.Duration(now - start)
	if el >= rampTime {
		return 1
	}
	return math.Max(float64(el)/float64(rampTime), 0.01)
}

// observe folds conns into the member's smoothed count and returns it.
func (m *memberRT) observe(conns int64) float64 {
	old := math.Float64frombits(m.smoothed.Load())
	s := old + 0.1*(float64(conns)-old)
	m.smoothed.Store(math.Float64bits(s))
	return s
}

// poolRT is a pool's runtime: the current snapshot, rotation state and
// counters.
type poolRT struct {
	name  string
	snap  atomic.Pointer[poolSnap]
	bal   lb.Balancer
	stats counters
}

// poolSnap is one commit's view of a pool.
type poolSnap struct {
	cfg     *Pool
	alg     lb.Algorithm
	byNode  bool
	members []*memberRT
}

// lbModeSpec is a load-balancing mode as the balancer runs it.
type lbModeSpec struct {
	alg    lb.Algorithm
	byNode bool
}

// pickWith is the pool's load balancing for a new flow, skipping members
// in exclude (members that already failed to connect) and those not
// usable or at their limit; mode replaces the pool's mode for this one
// decision (an iRule's LB::mode), nil keeps it. nil when none is usable.
func (p *poolRT) pickWith(exclude []*memberRT, mode *lbModeSpec) *memberRT {
	s := p.snap.Load()
	if s == nil {
		return nil
	}
	alg, byNode := s.alg, s.byNode
	if mode != nil {
		alg, byNode = mode.alg, mode.byNode
	}
	var buf, gbuf [16]lb.Candidate
	cands := buf[:0]
	now := time.Now().UnixNano()
outer:
	for i, m := range s.members {
		for _, x := range exclude {
			if x == m {
				continue outer
			}
		}
		if !m.usable() || m.atLimit() {
			continue
		}
		c := m.cfg.Load()
		cand := lb.Candidate{Index: i, Priority: c.PriorityGroup, Ratio: c.Ratio,
			Conns: m.stats.cur.Load(), Limit: c.ConnectionLimit,
			Outstanding: m.node.outstanding.Load()}
		if byNode {
			nc := m.node.cfg.Load()
			cand.Ratio, cand.Conns, cand.Limit = nc.Ratio, m.node.stats.cur.Load(), nc.ConnectionLimit
		}
		if alg == lb.Observed || alg == lb.Predictive {
			cand.Smoothed = m.observe(cand.Conns)
		}
		if s.cfg.SlowRampTime > 0 {
			cand.Ramp = m.ramp(now, s.cfg.SlowRampTime)
		}
		cands = append(cands, cand)
	}
	cands = lb.ActiveGroup(cands, s.cfg.MinActiveMembers, gbuf[:0])
	k := p.bal.Pick(alg, cands)
	if k < 0 {
		return nil
	}
	return s.members[cands[k].Index]
}

// vsRT is a virtual server's runtime.
type vsRT struct {
	name     string
	snap     atomic.Pointer[vsSnap]
	stats    counters
	durs     durations
	snatNext atomic.Uint32
}

// vsSnap is one commit's view of a virtual.
type vsSnap struct {
	cfg      *Virtual
	pool     *poolRT
	idle     time.Duration
	snatPool []netip.Addr
	selfIPs  []netip.Addr
	evMask   uint16 // the proxy events the virtual's rules handle
}
