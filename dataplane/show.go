package dataplane

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// BIG-IP's status reasons (reference §3.1–3.3). Those marked [M] in the
// reference are our best reading of BIG-IP's wording.
const (
	reasonVSAvailable     = "The virtual server is available"
	reasonChildrenDown    = "The children pool member(s) are down"
	reasonChildrenUnknown = "The children pool member(s) either don't have service checking enabled, or service check results are not available yet"
	reasonVSNoPool        = "The virtual server has no pool"
	reasonVSLimit         = "The virtual server has reached its connection limit"
	reasonPoolAvailable   = "The pool is available"
	reasonPoolEmpty       = "The pool has no members"
	reasonMemberAvailable = "Pool member is available"
	reasonMemberDown      = "Pool member has been marked down by a monitor"
	reasonMemberRuleDown  = "Pool member has been marked down by an iRule (LB::down)"
	reasonMemberUnchecked = "Pool member does not have service checking enabled"
	reasonMemberChecking  = "Pool member status is being checked"
	reasonMemberLimit     = "Pool member has reached its connection limit"
	reasonParentDown      = "Parent down"
	reasonForcedDown      = "Forced down"
	reasonNodeAvailable   = "Node address is available"
	reasonNodeDown        = "Node address has been marked down by a monitor"
	reasonNodeRuleDown    = "Node address has been marked down by an iRule (LB::down)"
	reasonNodeUnchecked   = "Node address does not have service checking enabled"
	reasonNodeChecking    = "Node address status is being checked"
	reasonNodeLimit       = "Node address has reached its connection limit"
	// The rate-limit reasons [M]: BIG-IP's connection-limit wording with
	// "rate limit".
	reasonVSRate     = "The virtual server has reached its connection rate limit"
	reasonMemberRate = "Pool member has reached its connection rate limit"
	reasonNodeRate   = "Node address has reached its connection rate limit"
)

// memberStats builds one member's block; poolRule is the pool's monitor
// rule.
func memberStats(m *state.Member, poolRule MonitorRule) MemberStats {
	c := m.Cfg.Load()
	n := m.Node
	ms := MemberStats{Pool: m.Pool.Name, Name: m.Name, Addr: c.Addr, Node: c.Node,
		ServerSide: trafficOf(&m.Stats), TotRequests: m.Stats.Requests.Load()}
	rule, inherited := c.Monitor, false
	if rule.IsZero() {
		rule, inherited = poolRule, true
	}
	if !rule.IsZero() {
		ms.Monitor = rule.String()
		if inherited {
			ms.Monitor += " (pool monitor)"
		}
	}
	mon, nmon := m.Watch.Current(), n.Watch.Current()
	st := Status{State: "enabled"}
	switch {
	case c.Session == SessionUserDisabled || c.State == StateUserDown:
		st.State = "disabled"
	case n.Disabled() || n.Forced():
		st.State = "disabled-by-parent"
	}
	ms.SessionStatus = "enabled"
	switch {
	case c.Session == SessionUserDisabled || c.State == StateUserDown:
		ms.SessionStatus = "user-disabled"
	case m.Watch.Disabled.Load():
		ms.SessionStatus = "monitor-disabled"
	}
	ms.MonitorStatus = mon.String()
	switch {
	case c.State == StateUserDown:
		ms.MonitorStatus = "user-down"
		st.Availability, st.Reason = Offline, reasonForcedDown
	case n.Forced():
		ms.MonitorStatus = "user-down"
		st.Availability, st.Reason = Offline, reasonParentDown
	case nmon == state.MonDown:
		ms.MonitorStatus = "address-down"
		st.Availability, st.Reason = Offline, reasonParentDown
	case mon == state.MonDown && m.Watch.MarkedDown():
		st.Availability, st.Reason = Offline, reasonMemberRuleDown
	case mon == state.MonDown:
		st.Availability, st.Reason = Offline, reasonMemberDown
	case m.AtConnectionLimit():
		st.Availability, st.Reason = Unavailable, reasonMemberLimit
	case m.AtLimit(): // its own or its node's rate limit, this second
		st.Availability, st.Reason = Unavailable, reasonMemberRate
	case mon == state.MonUp:
		st.Availability, st.Reason = Available, reasonMemberAvailable
	case mon == state.MonChecking:
		st.Availability, st.Reason = Unknown, reasonMemberChecking
	default:
		st.Availability, st.Reason = Unknown, reasonMemberUnchecked
	}
	if st.State != "enabled" && st.Availability != Offline {
		if st.State == "disabled" {
			st.Reason += ", user disabled"
		} else {
			st.Reason += ", parent disabled"
		}
	} else if ms.SessionStatus == "monitor-disabled" && st.Availability == Available {
		st.Reason += ", monitor disabled"
	}
	ms.Status = st
	return ms
}

// poolStats is the pool block with its members rolled up.
func poolStats(p *state.Pool) PoolStats {
	s := p.Snap.Load()
	ps := PoolStats{Name: p.Name, ServerSide: trafficOf(&p.Stats), TotRequests: p.Stats.Requests.Load(),
		MinActiveMembers: s.Cfg.MinActiveMembers, TotalMembers: len(s.Members),
		ConnQueue: p.Queue.Stats(), Queueing: s.Cfg.QueueOnConnLimit}
	if !s.Cfg.Monitor.IsZero() {
		ps.Monitor = s.Cfg.Monitor.String()
	}
	offline, enabled := 0, 0
	for _, m := range s.Members {
		ms := memberStats(m, s.Cfg.Monitor)
		ps.Members = append(ps.Members, ms)
		switch ms.Status.Availability {
		case Available:
			ps.AvailableMembers++
		case Offline:
			offline++
		}
		if ms.Status.State == "enabled" {
			enabled++
		}
		if m.Usable() && !m.AtLimit() {
			ps.CurActiveMembers++
		}
	}
	st := Status{State: "enabled"}
	switch {
	case len(s.Members) == 0:
		st.Availability, st.Reason = Unknown, reasonPoolEmpty
	case ps.AvailableMembers > 0:
		st.Availability, st.Reason = Available, reasonPoolAvailable
	case offline == len(s.Members):
		st.Availability, st.Reason = Offline, reasonChildrenDown
	default:
		st.Availability, st.Reason = Unknown, reasonChildrenUnknown
	}
	if len(s.Members) > 0 && enabled == 0 {
		st.State = "disabled-by-parent"
	}
	ps.Status = st
	return ps
}

// virtualStats is the virtual's block, its status rolled up from its
// pool.
func virtualStats(v *state.Virtual) VirtualStats {
	s := v.Snap.Load()
	vs := VirtualStats{Name: v.Name, ClientSide: trafficOf(&v.Stats), Ephemeral: trafficOf(&v.Ephemeral), TotRequests: v.Stats.Requests.Load(),
		MinConnDuration: v.Durs.Min.Load(), MaxConnDuration: v.Durs.Max.Load(),
		RateLimit: s.Cfg.RateLimit, RateLimited: v.RateDropped.Load(), Evicted: v.Evict.Evicted.Load(),
		SlowFlows: uint64(max(v.Evict.SlowFlows.Load(), 0)), SlowKilled: v.Evict.SlowKilled.Load(),
		EvictRefused: v.Evict.Refused.Load()}
	if len(s.Cfg.Clone) > 0 || v.Clone.Conns.Load() > 0 || v.Clone.Dropped.Load() > 0 {
		vs.Clone = &CloneStats{Conns: v.Clone.Conns.Load(), Bytes: v.Clone.Bytes.Load(), Dropped: v.Clone.Dropped.Load()}
	}
	if n := v.Durs.N.Load(); n > 0 {
		vs.MeanConnDuration = v.Durs.Sum.Load() / n
	}
	dst := s.Cfg.Destination
	switch {
	case len(s.Cfg.PortRanges) > 0:
		vs.Destination = JoinPort(dst.Addr().String(), 0)
	case s.Cfg.AnyPort():
		// Every port: "any", as tmsh writes the destination and shows a
		// criteria's wildcard [M] (anyport.go).
		vs.Destination = strings.TrimSuffix(JoinPort(dst.Addr().String(), 0), "0") + "any"
	default:
		vs.Destination = JoinPort(dst.Addr().String(), dst.Port())
	}
	st := Status{State: "enabled"}
	if !s.Cfg.Enabled {
		st.State = "disabled"
	}
	switch {
	case s.Cfg.ConnectionLimit > 0 && s.Evict == nil && v.Stats.Cur.Load() >= int64(s.Cfg.ConnectionLimit):
		// With a flow-eviction-policy a full virtual still takes new
		// clients (evict.go) [M].
		st.Availability, st.Reason = Unavailable, reasonVSLimit
	case v.RateLimited(s):
		st.Availability, st.Reason = Unavailable, reasonVSRate
	case s.Cfg.Reject:
		// A reject virtual needs no pool: it is there to refuse [M].
		st.Availability, st.Reason = Available, reasonVSAvailable
	case s.Pool == nil:
		st.Availability, st.Reason = Unknown, reasonVSNoPool
	default:
		switch ps := poolStats(s.Pool); ps.Status.Availability {
		case Available:
			st.Availability, st.Reason = Available, reasonVSAvailable
		case Offline:
			st.Availability, st.Reason = Offline, reasonChildrenDown
		default:
			st.Availability, st.Reason = Unknown, reasonChildrenUnknown
		}
	}
	addressStatus(s, &st) // vaddr.go
	vs.Status = st
	return vs
}

// nodeStats is the node's block.
func nodeStats(n *state.Node) NodeStats {
	c := n.Cfg.Load()
	ns := NodeStats{Name: n.Name, Addr: c.Addr, ServerSide: trafficOf(&n.Stats), TotRequests: n.Stats.Requests.Load()}
	rule := n.Watch.Rule()
	if !rule.IsZero() {
		ns.Monitor = rule.String()
		if c.Monitor == nil {
			ns.Monitor += " (default node monitor)"
		}
	}
	mon := n.Watch.Current()
	st := Status{State: "enabled"}
	ns.SessionStatus = "enabled"
	if c.Session == SessionUserDisabled || c.State == StateUserDown {
		st.State, ns.SessionStatus = "disabled", "user-disabled"
	}
	ns.MonitorStatus = mon.String()
	switch {
	case c.State == StateUserDown:
		ns.MonitorStatus = "user-down"
		st.Availability, st.Reason = Offline, reasonForcedDown
	case mon == state.MonDown && n.Watch.MarkedDown():
		st.Availability, st.Reason = Offline, reasonNodeRuleDown
	case mon == state.MonDown:
		st.Availability, st.Reason = Offline, reasonNodeDown
	case c.ConnectionLimit > 0 && n.Stats.Cur.Load() >= int64(c.ConnectionLimit):
		st.Availability, st.Reason = Unavailable, reasonNodeLimit
	case n.RateLimited():
		st.Availability, st.Reason = Unavailable, reasonNodeRate
	case mon == state.MonUp:
		st.Availability, st.Reason = Available, reasonNodeAvailable
	case mon == state.MonChecking:
		st.Availability, st.Reason = Unknown, reasonNodeChecking
	default:
		st.Availability, st.Reason = Unknown, reasonNodeUnchecked
	}
	if st.State == "disabled" && st.Availability != Offline {
		st.Reason += ", user disabled"
	}
	ns.Status = st
	return ns
}

// Virtuals returns every virtual server's statistics, by name.
func (p *Plane) Virtuals() []VirtualStats {
	return withoutNAT(listStats(p, &p.virtuals, virtualStats), func(v VirtualStats) string { return v.Name })
}

// Virtual returns one virtual server's statistics.
func (p *Plane) Virtual(name string) (VirtualStats, bool) {
	return oneStats(p, &p.virtuals, name, virtualStats)
}

// Pools returns every pool's statistics with members, by name.
func (p *Plane) Pools() []PoolStats {
	return withoutNAT(listStats(p, &p.pools, poolStats), func(v PoolStats) string { return v.Name })
}

// Pool returns one pool's statistics with members.
func (p *Plane) Pool(name string) (PoolStats, bool) { return oneStats(p, &p.pools, name, poolStats) }

// listStats takes the objects of one of the plane's maps (m points to
// the field: a commit replaces the map under the lock) by name under its
// lock, and reads their counters after it: reading them needs no lock,
// and a show must not hold up a commit.
func listStats[T, S any](p *Plane, m *map[string]*T, stats func(*T) S) []S {
	p.mu.Lock()
	xs := make([]*T, 0, len(*m))
	for _, name := range sortedKeys(*m) {
		xs = append(xs, (*m)[name])
	}
	p.mu.Unlock()
	out := make([]S, 0, len(xs))
	for _, x := range xs {
		out = append(out, stats(x))
	}
	return out
}

// oneStats is listStats for one object; false when there is none by
// that name.
func oneStats[T, S any](p *Plane, m *map[string]*T, name string, stats func(*T) S) (S, bool) {
	p.mu.Lock()
	x := (*m)[name]
	p.mu.Unlock()
	if x == nil {
		var zero S
		return zero, false
	}
	return stats(x), true
}

// Nodes returns every node's statistics, by name (including nodes the
// configuration left implicit under members).
func (p *Plane) Nodes() []NodeStats {
	out := withoutNAT(listStats(p, &p.nodes, nodeStats), func(v NodeStats) string { return v.Name })
	fq := p.FQDNNodes()
	for _, name := range sortedKeys(fq) {
		out = append(out, fqdnNodeStats(name, fq[name]))
	}
	slices.SortStableFunc(out, func(a, b NodeStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Node returns one node's statistics.
func (p *Plane) Node(name string) (NodeStats, bool) {
	if ns, ok := oneStats(p, &p.nodes, name, nodeStats); ok {
		return ns, true
	}
	if f, ok := p.FQDNNodes()[name]; ok {
		return fqdnNodeStats(name, f), true
	}
	return NodeStats{}, false
}

// fqdnNodeStats is `show ltm node` for an FQDN node: its address any6,
// its monitor status the name's resolution, as BIG-IP shows them.
func fqdnNodeStats(name string, f FQDNStatus) NodeStats {
	ns := NodeStats{Name: name, Addr: netip.IPv6Unspecified(), MonitorStatus: f.Status, SessionStatus: "enabled", FQDN: &f}
	ns.Status = Status{State: "enabled"}
	switch f.Status {
	case "fqdn-up":
		ns.Status.Availability, ns.Status.Reason = Available, "The FQDN "+f.Name+" resolves to "+strconv.Itoa(len(f.Addrs))+" address(es)"
	case "fqdn-down":
		ns.Status.Availability, ns.Status.Reason = Offline, "The FQDN "+f.Name+" does not resolve: "+f.LastError
	case "fqdn-up-no-addr":
		ns.Status.Availability, ns.Status.Reason = Offline, "The FQDN "+f.Name+" has no address"
	default:
		ns.Status.Availability, ns.Status.Reason = Unknown, "The FQDN "+f.Name+" is being resolved"
	}
	return ns
}

// StatsKind names what `reset-stats` resets.
type StatsKind string

// The kinds ResetStats accepts.
const (
	StatsVirtual StatsKind = "virtual"
	StatsPool    StatsKind = "pool"
	StatsNode    StatsKind = "node"
)

// ResetStats zeroes the counters of one object, or of every object of the
// kind when name is "" (`reset-stats ltm pool`). A pool's reset includes its
// members'. It reports whether anything matched.
func (p *Plane) ResetStats(kind StatsKind, name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	found := false
	switch kind {
	case StatsVirtual:
		for n, v := range p.virtuals {
			if name == "" && strings.HasPrefix(n, natPrefix) {
				continue // a NAT's own (reset-stats ltm nat)
			}
			if name == "" || n == name {
				v.Stats.Reset()
				v.Ephemeral.Reset()
				v.Durs.Reset()
				v.Spread.Reset()
				v.RateDropped.Store(0)
				v.Evict.Evicted.Store(0)
				v.Evict.SlowKilled.Store(0)
				v.Evict.Refused.Store(0)
				v.Clone.Reset()
				found = true
			}
		}
	case StatsPool:
		for n, x := range p.pools {
			if name == "" || n == name {
				x.Stats.Reset()
				x.Queue.ResetStats()
				for _, m := range x.Snap.Load().Members {
					m.Stats.Reset()
				}
				found = true
			}
		}
	case StatsNode:
		for n, x := range p.nodes {
			if name == "" || n == name {
				x.Stats.Reset()
				found = true
			}
		}
	}
	return found
}

// Connections streams the connection table's records that pass the filter
// to fn until fn returns false, and returns how many fn received. Records
// are produced one flow at a time; fn must not keep the pointer.
func (p *Plane) Connections(f ConnFilter, fn func(*Connection) bool) int {
	return p.table.Walk(f, fn)
}

// DeleteConnections resets every flow with a record passing the filter (a
// zero filter flushes the table) and returns how many flows it closed.
func (p *Plane) DeleteConnections(f ConnFilter) int {
	hit := p.table.Matching(f)
	for _, fl := range hit {
		fl.Abort()
	}
	return len(hit)
}

// ConnectionCount is the number of client flows in the table.
func (p *Plane) ConnectionCount() int { return p.table.Len() }
