package dataplane

import (
	"math"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/lb"
)

// Modes maps each mode to its algorithm and whether node figures (ratio,
// connections, limit) feed it instead of the member's.
var Modes = map[LBMode]lbModeSpec{
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

func ModeNames() []string {
	var out []string
	for m := range Modes {
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
	Name        string
	Cfg         atomic.Pointer[Node]
	Stats       counters
	Outstanding atomic.Int64 // requests awaiting an answer (fastest-node)
	Watch       *watch
}

func (n *nodeRT) Forced() bool   { return n.Cfg.Load().State == StateUserDown }
func (n *nodeRT) Disabled() bool { return n.Cfg.Load().Session == SessionUserDisabled }

// memberRT is a pool member's runtime, keyed by pool and member name so it
// survives commits that keep the member.
type memberRT struct {
	Key       string // pool + " " + name
	Pool      *poolRT
	Name      string
	Node      *nodeRT
	Cfg       atomic.Pointer[Member]
	Stats     counters
	Watch     *watch
	RampStart atomic.Int64  // when it last became available (slow ramp)
	smoothed  atomic.Uint64 // float64 bits: connections averaged over picks
}

// avail is how far a member (or node) may take traffic, from its and its
// node's admin states and monitors (reference §3.3). It is the one
// availability decision: load balancing, persistence, a rule's named
// member and LB::status all read it. Worse states are greater.
type avail uint8

const (
	// AvailUp may be load balanced to.
	AvailUp avail = iota
	// AvailDisabled (member or node disabled, or a monitor's
	// recv-disable matched) takes persisted and rule-named clients only.
	AvailDisabled
	// AvailDown is marked down by a monitor of the member or its node.
	AvailDown
	// AvailForced is forced offline (member or node).
	AvailForced
)

// Availability is the node's own Availability.
func (n *nodeRT) Availability() avail {
	c := n.Cfg.Load()
	switch {
	case c.State == StateUserDown:
		return AvailForced
	case n.Watch.Current() == MonDown:
		return AvailDown
	case c.Session == SessionUserDisabled:
		return AvailDisabled
	}
	return AvailUp
}

// Availability is the member's Availability: its own, or its node's when
// that is worse.
func (m *memberRT) Availability() avail {
	c := m.Cfg.Load()
	a := AvailUp
	switch {
	case c.State == StateUserDown:
		a = AvailForced
	case m.Watch.Current() == MonDown:
		a = AvailDown
	case c.Session == SessionUserDisabled || m.Watch.Disabled.Load():
		a = AvailDisabled
	}
	return max(a, m.Node.Availability())
}

// Usable reports whether the member may be load balanced to (limits
// aside).
func (m *memberRT) Usable() bool { return m.Availability() == AvailUp }

// StatusWord is LB::status's word for an availability.
func (a avail) StatusWord() string {
	switch a {
	case AvailForced, AvailDown:
		return "down"
	case AvailDisabled:
		return "session_disabled"
	}
	return "up"
}

// AtLimit reports whether the member's or its node's connection limit is
// reached.
func (m *memberRT) AtLimit() bool {
	c := m.Cfg.Load()
	if c.ConnectionLimit > 0 && m.Stats.Cur.Load() >= int64(c.ConnectionLimit) {
		return true
	}
	nc := m.Node.Cfg.Load()
	return nc.ConnectionLimit > 0 && m.Node.Stats.Cur.Load() >= int64(nc.ConnectionLimit)
}

// Reserve counts a new connection on the member and its node, respecting
// both limits; it fails when a limit was reached meanwhile.
func (m *memberRT) Reserve() bool {
	if !m.Stats.TryOpen(m.Cfg.Load().ConnectionLimit) {
		return false
	}
	if !m.Node.Stats.TryOpen(m.Node.Cfg.Load().ConnectionLimit) {
		m.Stats.Close()
		m.Stats.Tot.Add(^uint64(0))
		return false
	}
	return true
}

func (m *memberRT) Release() {
	m.Stats.Close()
	m.Node.Stats.Close()
}

// ramp is the member's slow-ramp share at now (1 when not ramping).
func (m *memberRT) ramp(now int64, rampTime time.Duration) float64 {
	start := m.RampStart.Load()
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
	Name  string
	Snap  atomic.Pointer[poolSnap]
	bal   lb.Balancer
	Stats counters
}

// poolSnap is one commit's view of a pool.
type poolSnap struct {
	Cfg     *Pool
	Alg     lb.Algorithm
	ByNode  bool
	Members []*memberRT
}

// lbModeSpec is a load-balancing mode as the balancer runs it.
type lbModeSpec struct {
	Alg    lb.Algorithm
	ByNode bool
}

// Pick is the pool's load balancing for a new flow, skipping members
// in exclude (members that already failed to connect) and those not
// usable or at their limit; mode replaces the pool's mode for this one
// decision (an iRule's LB::mode), nil keeps it. nil when none is usable.
func (p *poolRT) Pick(exclude []*memberRT, mode *lbModeSpec) *memberRT {
	s := p.Snap.Load()
	if s == nil {
		return nil
	}
	alg, byNode := s.Alg, s.ByNode
	if mode != nil {
		alg, byNode = mode.Alg, mode.ByNode
	}
	var buf, gbuf [16]lb.Candidate
	cands := buf[:0]
	now := time.Now().UnixNano()
outer:
	for i, m := range s.Members {
		for _, x := range exclude {
			if x == m {
				continue outer
			}
		}
		if !m.Usable() || m.AtLimit() {
			continue
		}
		c := m.Cfg.Load()
		cand := lb.Candidate{Index: i, Priority: c.PriorityGroup, Ratio: c.Ratio,
			Conns: m.Stats.Cur.Load(), Limit: c.ConnectionLimit,
			Outstanding: m.Node.Outstanding.Load()}
		if byNode {
			nc := m.Node.Cfg.Load()
			cand.Ratio, cand.Conns, cand.Limit = nc.Ratio, m.Node.Stats.Cur.Load(), nc.ConnectionLimit
		}
		if alg == lb.Observed || alg == lb.Predictive {
			cand.Smoothed = m.observe(cand.Conns)
		}
		if s.Cfg.SlowRampTime > 0 {
			cand.Ramp = m.ramp(now, s.Cfg.SlowRampTime)
		}
		cands = append(cands, cand)
	}
	cands = lb.ActiveGroup(cands, s.Cfg.MinActiveMembers, gbuf[:0])
	k := p.bal.Pick(alg, cands)
	if k < 0 {
		return nil
	}
	return s.Members[cands[k].Index]
}

// vsRT is a virtual server's runtime.
type vsRT struct {
	Name     string
	Snap     atomic.Pointer[vsSnap]
	Stats    counters
	Durs     durations
	snatNext atomic.Uint32
}

// vsSnap is one commit's view of a virtual.
type vsSnap struct {
	Cfg      *Virtual
	Pool     *poolRT
	Idle     time.Duration
	SnatPool []netip.Addr
	SelfIPs  []netip.Addr
	EvMask   uint16 // the proxy events the virtual's rules handle
}
