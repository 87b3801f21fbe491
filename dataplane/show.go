package dataplane

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
	reasonMemberUnchecked = "Pool member does not have service checking enabled"
	reasonMemberChecking  = "Pool member status is being checked"
	reasonMemberLimit     = "Pool member has reached its connection limit"
	reasonParentDown      = "Parent down"
	reasonForcedDown      = "Forced down"
	reasonNodeAvailable   = "Node address is available"
	reasonNodeDown        = "Node address has been marked down by a monitor"
	reasonNodeUnchecked   = "Node address does not have service checking enabled"
	reasonNodeChecking    = "Node address status is being checked"
	reasonNodeLimit       = "Node address has reached its connection limit"
)

// memberStats builds one member's block; rule is the pool's monitor rule.
func (m *memberRT) snapshot(poolRule MonitorRule) MemberStats {
	c := m.cfg.Load()
	n := m.node
	ms := MemberStats{Pool: m.pool.name, Name: m.name, Addr: c.Addr, Node: c.Node,
		ServerSide: m.stats.traffic(), TotRequests: m.stats.requests.Load()}
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
	mon, nmon := m.watch.current(), n.watch.current()
	st := Status{State: "enabled"}
	switch {
	case c.Session == SessionUserDisabled || c.State == StateUserDown:
		st.State = "disabled"
	case n.disabled() || n.forced():
		st.State = "disabled-by-parent"
	}
	ms.SessionStatus = "enabled"
	switch {
	case c.Session == SessionUserDisabled || c.State == StateUserDown:
		ms.SessionStatus = "user-disabled"
	case m.watch.disabled.Load():
		ms.SessionStatus = "monitor-disabled"
	}
	ms.MonitorStatus = mon.String()
	switch {
	case c.State == StateUserDown:
		ms.MonitorStatus = "user-down"
		st.Availability, st.Reason = Offline, reasonForcedDown
	case n.forced():
		ms.MonitorStatus = "user-down"
		st.Availability, st.Reason = Offline, reasonParentDown
	case nmon == monDown:
		ms.MonitorStatus = "address-down"
		st.Availability, st.Reason = Offline, reasonParentDown
	case mon == monDown:
		st.Availability, st.Reason = Offline, reasonMemberDown
	case m.atLimit():
		st.Availability, st.Reason = Unavailable, reasonMemberLimit
	case mon == monUp:
		st.Availability, st.Reason = Available, reasonMemberAvailable
	case mon == monChecking:
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

// snapshot is the pool block with its members rolled up.
func (p *poolRT) snapshot() PoolStats {
	s := p.snap.Load()
	ps := PoolStats{Name: p.name, ServerSide: p.stats.traffic(), TotRequests: p.stats.requests.Load(),
		MinActiveMembers: s.cfg.MinActiveMembers, TotalMembers: len(s.members)}
	if !s.cfg.Monitor.IsZero() {
		ps.Monitor = s.cfg.Monitor.String()
	}
	offline, enabled := 0, 0
	for _, m := range s.members {
		ms := m.snapshot(s.cfg.Monitor)
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
		if m.usable() && !m.atLimit() {
			ps.CurActiveMembers++
		}
	}
	st := Status{State: "enabled"}
	switch {
	case len(s.members) == 0:
		st.Availability, st.Reason = Unknown, reasonPoolEmpty
	case ps.AvailableMembers > 0:
		st.Availability, st.Reason = Available, reasonPoolAvailable
	case offline == len(s.members):
		st.Availability, st.Reason = Offline, reasonChildrenDown
	default:
		st.Availability, st.Reason = Unknown, reasonChildrenUnknown
	}
	if len(s.members) > 0 && enabled == 0 {
		st.State = "disabled-by-parent"
	}
	ps.Status = st
	return ps
}

func (v *vsRT) snapshot() VirtualStats {
	s := v.snap.Load()
	vs := VirtualStats{Name: v.name, ClientSide: v.stats.traffic(), TotRequests: v.stats.requests.Load(),
		MinConnDuration: v.durs.min.Load(), MaxConnDuration: v.durs.max.Load()}
	if n := v.durs.n.Load(); n > 0 {
		vs.MeanConnDuration = v.durs.sum.Load() / n
	}
	dst := s.cfg.Destination
	if len(s.cfg.PortRanges) > 0 {
		vs.Destination = JoinPort(dst.Addr().String(), 0)
	} else {
		vs.Destination = JoinPort(dst.Addr().String(), dst.Port())
	}
	st := Status{State: "enabled"}
	if !s.cfg.Enabled {
		st.State = "disabled"
	}
	switch {
	case s.cfg.ConnectionLimit > 0 && v.stats.cur.Load() >= int64(s.cfg.ConnectionLimit):
		st.Availability, st.Reason = Unavailable, reasonVSLimit
	case s.pool == nil:
		st.Availability, st.Reason = Unknown, reasonVSNoPool
	default:
		switch ps := s.pool.snapshot(); ps.Status.Availability {
		case Available:
			st.Availability, st.Reason = Available, reasonVSAvailable
		case Offline:
			st.Availability, st.Reason = Offline, reasonChildrenDown
		default:
			st.Availability, st.Reason = Unknown, reasonChildrenUnknown
		}
	}
	vs.Status = st
	return vs
}

func (n *nodeRT) snapshot() NodeStats {
	c := n.cfg.Load()
	ns := NodeStats{Name: n.name, Addr: c.Addr, ServerSide: n.stats.traffic(), TotRequests: n.stats.requests.Load()}
	n.watch.mu.Lock()
	rule := n.watch.rule
	n.watch.mu.Unlock()
	if !rule.IsZero() {
		ns.Monitor = rule.String()
		if c.Monitor == nil {
			ns.Monitor += " (default node monitor)"
		}
	}
	mon := n.watch.current()
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
	case mon == monDown:
		st.Availability, st.Reason = Offline, reasonNodeDown
	case c.ConnectionLimit > 0 && n.stats.cur.Load() >= int64(c.ConnectionLimit):
		st.Availability, st.Reason = Unavailable, reasonNodeLimit
	case mon == monUp:
		st.Availability, st.Reason = Available, reasonNodeAvailable
	case mon == monChecking:
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
	p.mu.Lock()
	vs := make([]*vsRT, 0, len(p.virtuals))
	for _, name := range sortedKeys(p.virtuals) {
		vs = append(vs, p.virtuals[name])
	}
	p.mu.Unlock()
	out := make([]VirtualStats, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.snapshot())
	}
	return out
}

// Virtual returns one virtual server's statistics.
func (p *Plane) Virtual(name string) (VirtualStats, bool) {
	p.mu.Lock()
	v := p.virtuals[name]
	p.mu.Unlock()
	if v == nil {
		return VirtualStats{}, false
	}
	return v.snapshot(), true
}

// Pools returns every pool's statistics with members, by name.
func (p *Plane) Pools() []PoolStats {
	p.mu.Lock()
	ps := make([]*poolRT, 0, len(p.pools))
	for _, name := range sortedKeys(p.pools) {
		ps = append(ps, p.pools[name])
	}
	p.mu.Unlock()
	out := make([]PoolStats, 0, len(ps))
	for _, x := range ps {
		out = append(out, x.snapshot())
	}
	return out
}

// Pool returns one pool's statistics with members.
func (p *Plane) Pool(name string) (PoolStats, bool) {
	p.mu.Lock()
	x := p.pools[name]
	p.mu.Unlock()
	if x == nil {
		return PoolStats{}, false
	}
	return x.snapshot(), true
}

// Nodes returns every node's statistics, by name (including nodes the
// configuration left implicit under members).
func (p *Plane) Nodes() []NodeStats {
	p.mu.Lock()
	ns := make([]*nodeRT, 0, len(p.nodes))
	for _, name := range sortedKeys(p.nodes) {
		ns = append(ns, p.nodes[name])
	}
	p.mu.Unlock()
	out := make([]NodeStats, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.snapshot())
	}
	return out
}

// Node returns one node's statistics.
func (p *Plane) Node(name string) (NodeStats, bool) {
	p.mu.Lock()
	n := p.nodes[name]
	p.mu.Unlock()
	if n == nil {
		return NodeStats{}, false
	}
	return n.snapshot(), true
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
			if name == "" || n == name {
				v.stats.reset()
				v.durs.reset()
				found = true
			}
		}
	case StatsPool:
		for n, x := range p.pools {
			if name == "" || n == name {
				x.stats.reset()
				for _, m := range x.snap.Load().members {
					m.stats.reset()
				}
				found = true
			}
		}
	case StatsNode:
		for n, x := range p.nodes {
			if name == "" || n == name {
				x.stats.reset()
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
