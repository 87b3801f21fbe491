package state

import (
	"math"
	"net"
	"net/netip"
	"sort"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/lb"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/natobj"
	"github.com/openltm/openltm/dataplane/pktfilter"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// Modes maps each mode to its algorithm and whether node figures (ratio,
// connections, limit) feed it instead of the member's.
var Modes = map[config.LBMode]ModeSpec{
	"":                                    {lb.RoundRobin, false},
	config.RoundRobin:                     {lb.RoundRobin, false},
	config.RatioMember:                    {lb.Ratio, false},
	config.RatioNode:                      {lb.Ratio, true},
	config.LeastConnectionsMember:         {lb.LeastConns, false},
	config.LeastConnectionsNode:           {lb.LeastConns, true},
	config.WeightedLeastConnectionsMember: {lb.WeightedLeastConns, false},
	config.WeightedLeastConnectionsNode:   {lb.WeightedLeastConns, true},
	config.RatioLeastConnectionsMember:    {lb.RatioLeastConns, false},
	config.RatioLeastConnectionsNode:      {lb.RatioLeastConns, true},
	config.ObservedMember:                 {lb.Observed, false},
	config.PredictiveMember:               {lb.Predictive, false},
	config.FastestNode:                    {lb.Fastest, true},
	config.DynamicRatioMember:             {lb.DynamicRatio, false},
	config.DynamicRatioNode:               {lb.DynamicRatio, true},
}

// ModeNames lists the load-balancing modes the dataplane runs, sorted, for
// the errors that name them.
func ModeNames() []string {
	var out []string
	for m := range Modes {
		if m != "" {
			out = append(out, string(m))
		}
	}
	sort.Strings(out)
	return out
}

// Node is a node's runtime: counters and monitor state shared by every
// member on the node, kept across commits.
type Node struct {
	Name        string
	Cfg         atomic.Pointer[config.Node]
	Stats       Counters
	Outstanding atomic.Int64 // requests awaiting an answer (fastest-node)
	Watch       *Watch
	Rate        Rate // this second's new connections (rate-limit)
}

// Forced reports whether the node is forced offline (state user-down).
func (n *Node) Forced() bool { return n.Cfg.Load().State == config.StateUserDown }

// Disabled reports whether the node is disabled (session user-disabled).
func (n *Node) Disabled() bool { return n.Cfg.Load().Session == config.SessionUserDisabled }

// Member is a pool member's runtime, keyed by pool and member name so it
// survives commits that keep the member.
type Member struct {
	Key       string // pool + " " + name
	Pool      *Pool
	Name      string
	Node      *Node
	Cfg       atomic.Pointer[config.Member]
	Stats     Counters
	Watch     *Watch
	RampStart atomic.Int64  // when it last became available (slow ramp)
	smoothed  atomic.Uint64 // float64 bits: connections averaged over picks
	Rate      Rate          // this second's new connections (rate-limit)
}

// Avail is how far a member (or node) may take traffic, from its and its
// node's admin states and monitors (reference §3.3). It is the one
// availability decision: load balancing, persistence, a rule's named
// member and LB::status all read it. Worse states are greater.
type Avail uint8

const (
	// AvailUp may be load balanced to.
	AvailUp Avail = iota
	// AvailDisabled (member or node disabled, or a monitor's
	// recv-disable matched) takes persisted and rule-named clients only.
	AvailDisabled
	// AvailDown is marked down by a monitor of the member or its node.
	AvailDown
	// AvailForced is forced offline (member or node).
	AvailForced
)

// Availability is the node's own Availability.
func (n *Node) Availability() Avail {
	c := n.Cfg.Load()
	switch {
	case c.State == config.StateUserDown:
		return AvailForced
	case n.Watch.Current() == MonDown:
		return AvailDown
	case c.Session == config.SessionUserDisabled:
		return AvailDisabled
	}
	return AvailUp
}

// Availability is the member's Availability: its own, or its node's when
// that is worse.
func (m *Member) Availability() Avail {
	c := m.Cfg.Load()
	a := AvailUp
	switch {
	case c.State == config.StateUserDown:
		a = AvailForced
	case m.Watch.Current() == MonDown:
		a = AvailDown
	case c.Session == config.SessionUserDisabled || m.Watch.Disabled.Load():
		a = AvailDisabled
	}
	return max(a, m.Node.Availability())
}

// DynamicRatio is the member's weight in a dynamic-ratio pool: what its
// snmp-dca monitors last weighed, else its dynamic-ratio setting (1 by
// default). byNode (dynamic-ratio-node) takes the node's: its own
// monitors' ratio, else the member's monitors' [M: a pool's snmp-dca
// monitor measures the node's host either way], else the node's
// dynamic-ratio setting.
func (m *Member) DynamicRatio(byNode bool) int {
	if byNode {
		if r := m.Node.Watch.DynamicRatio(); r > 0 {
			return r
		}
		if r := m.Watch.DynamicRatio(); r > 0 {
			return r
		}
		return max(m.Node.Cfg.Load().DynamicRatio, 1)
	}
	if r := m.Watch.DynamicRatio(); r > 0 {
		return r
	}
	return max(m.Cfg.Load().DynamicRatio, 1)
}

// Usable reports whether the member may be load balanced to (limits
// aside).
func (m *Member) Usable() bool { return m.Availability() == AvailUp }

// StatusWord is LB::status's word for an availability.
func (a Avail) StatusWord() string {
	switch a {
	case AvailForced, AvailDown:
		return "down"
	case AvailDisabled:
		return "session_disabled"
	}
	return "up"
}

// AtLimit reports whether the member's or its node's connection limit is
// reached, or their rate limit spent for the current second: either way
// the member takes no new connection for now.
func (m *Member) AtLimit() bool {
	c := m.Cfg.Load()
	if c.ConnectionLimit > 0 && m.Stats.Cur.Load() >= int64(c.ConnectionLimit) {
		return true
	}
	nc := m.Node.Cfg.Load()
	if nc.ConnectionLimit > 0 && m.Node.Stats.Cur.Load() >= int64(nc.ConnectionLimit) {
		return true
	}
	if c.RateLimit|nc.RateLimit == 0 {
		return false
	}
	mr, nr := m.RateLimited()
	return mr || nr
}

// AtConnectionLimit reports whether the member's or its node's connection
// limit (not its rate limit) is reached.
func (m *Member) AtConnectionLimit() bool {
	c, nc := m.Cfg.Load(), m.Node.Cfg.Load()
	return c.ConnectionLimit > 0 && m.Stats.Cur.Load() >= int64(c.ConnectionLimit) ||
		nc.ConnectionLimit > 0 && m.Node.Stats.Cur.Load() >= int64(nc.ConnectionLimit)
}

// AtConnectionLimitBeyond is AtConnectionLimit with n of the member's
// connections not counted (one-connect limit-type none: idle pooled
// connections do not count toward the limit).
func (m *Member) AtConnectionLimitBeyond(n int64) bool {
	c, nc := m.Cfg.Load(), m.Node.Cfg.Load()
	return c.ConnectionLimit > 0 && m.Stats.Cur.Load()-n >= int64(c.ConnectionLimit) ||
		nc.ConnectionLimit > 0 && m.Node.Stats.Cur.Load()-n >= int64(nc.ConnectionLimit)
}

// AtRateLimit reports whether the member's or its node's rate limit is
// spent for the current second.
func (m *Member) AtRateLimit() bool {
	if m.Cfg.Load().RateLimit|m.Node.Cfg.Load().RateLimit == 0 {
		return false
	}
	mr, nr := m.RateLimited()
	return mr || nr
}

// Reserve counts a new connection on the member and its node, respecting
// both limits; it fails when a limit was reached meanwhile.
func (m *Member) Reserve() bool {
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

// Release gives back the connection Reserve counted on the member and its
// node.
func (m *Member) Release() {
	m.Stats.Close()
	m.Node.Stats.Close()
	if queuedTotal.Load() != 0 && m.Pool != nil { // connqueue.go
		m.slotFreed()
	}
}

// ReserveOverride counts a new connection on m ignoring connection limits
// (override-connection-limit).
func (m *Member) ReserveOverride() {
	m.Stats.TryOpen(0)
	m.Node.Stats.TryOpen(0)
}

// ramp is the member's slow-ramp share at now (1 when not ramping).
func (m *Member) ramp(now int64, rampTime time.Duration) float64 {
	start := m.RampStart.Load()
	if rampTime <= 0 || start == 0 {
		return 1
	}
	el := time.Duration(now - start)
	if el >= rampTime {
		// The ramp is over: forget its start, so that picks stop reading
		// the clock for this member (unless it came up again meanwhile).
		m.RampStart.CompareAndSwap(start, 0)
		return 1
	}
	return math.Max(float64(el)/float64(rampTime), 0.01)
}

// observe folds conns into the member's smoothed count and returns it.
func (m *Member) observe(conns int64) float64 {
	old := math.Float64frombits(m.smoothed.Load())
	s := old + 0.1*(float64(conns)-old)
	m.smoothed.Store(math.Float64bits(s))
	return s
}

// Pool is a pool's runtime: the current snapshot, rotation state and
// counters.
type Pool struct {
	Name  string
	Snap  atomic.Pointer[PoolSnap]
	bal   lb.Balancer
	Stats Counters
	// Queue holds new connections while every member is at its
	// connection limit (connqueue.go).
	Queue ConnQueue
}

// PoolSnap is one commit's view of a pool.
type PoolSnap struct {
	Cfg     *config.Pool
	Alg     lb.Algorithm
	ByNode  bool
	Members []*Member
}

// ModeSpec is a load-balancing mode as the balancer runs it.
type ModeSpec struct {
	Alg    lb.Algorithm
	ByNode bool
}

// Pick is the pool's load balancing for a new flow, skipping members
// in exclude (members that already failed to connect) and those not
// usable or at their limit; mode replaces the pool's mode for this one
// decision (an iRule's LB::mode), nil keeps it. nil when none is usable.
func (p *Pool) Pick(exclude []*Member, mode *ModeSpec) *Member {
	return p.PickWith(exclude, mode, nil)
}

// PickWith is Pick with room deciding whether a member's connection
// limit lets it take the flow (message-balanced virtuals, where an idle
// OneConnect connection may carry a request beyond it); nil: AtLimit.
// Rate limits apply either way.
func (p *Pool) PickWith(exclude []*Member, mode *ModeSpec, room func(*Member) bool) *Member {
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
	var now int64 // read once, and only for a member still ramping up
outer:
	for i, m := range s.Members {
		for _, x := range exclude {
			if x == m {
				continue outer
			}
		}
		if !m.Usable() {
			continue
		}
		if room == nil {
			if m.AtLimit() {
				continue
			}
		} else if !room(m) || m.AtRateLimit() {
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
		if alg == lb.DynamicRatio {
			cand.Ratio = m.DynamicRatio(byNode)
		}
		if alg == lb.Observed || alg == lb.Predictive {
			cand.Smoothed = m.observe(cand.Conns)
		}
		if s.Cfg.SlowRampTime > 0 && m.RampStart.Load() != 0 {
			if now == 0 {
				now = time.Now().UnixNano()
			}
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

// Virtual is a virtual server's runtime.
type Virtual struct {
	Name     string
	Snap     atomic.Pointer[VirtualSnap]
	Stats    Counters
	Durs     Durations
	snatNext atomic.Uint32
	// Spread is who the virtual's traffic comes from (spread.go).
	Spread Spread
	// Prof is what the virtual counts for its profiles' shows (profiles.go).
	Prof ProfileCounters
	// Rate is the virtual's budget of new connections in mode object;
	// RateDropped counts the connections its rate-limit refused.
	Rate        Rate
	RateDropped atomic.Uint64
	// Evict is the virtual's flow-eviction-policy's state (evict.go).
	Evict Eviction
	// Clone counts the copies sent to the virtual's clone pools
	// (clone.go).
	Clone clone.Counters
	// Ephemeral counts the flows of the listeners the virtual's
	// connections open for themselves (a rule's UDP listen relays),
	// apart from its clients' (show ltm virtual's Ephemeral column).
	Ephemeral Counters
}

// VirtualSnap is one commit's view of a virtual.
type VirtualSnap struct {
	Cfg      *config.Virtual
	Pool     *Pool
	Idle     time.Duration
	SnatPool []netip.Addr
	// SnatPoolStats is each SnatPool address as the commit gives it
	// out: its counters (show ltm snat-translation) and its ltm
	// snat-translation's limit and idle timeouts; nil in tests that
	// build a snapshot alone.
	SnatPoolStats []*snatobj.Addr
	// SNATIndex is the commit's translation addresses with an ltm
	// snat-translation, by address: a rule's snat/snatpool decision and
	// automap count them through it, and hold those with a limit or idle
	// timeout; nil when there are none (one nil test per such choice).
	SNATIndex *snatobj.Index
	// Automap is automap's address and ltm snat-translation per family
	// ([0] IPv4, [1] IPv6), resolved at commit (AutomapOf) while
	// SNATIndex is set, so that automap's choice takes its translation
	// without a lookup; zero: looked up per choice (automap.go).
	Automap [2]AutomapXlat
	// SNATPools is every snatpool's addresses as the commit gives them
	// out (SnatPoolStats is the virtual's own), by name: a message
	// routing transport-config's snatpool counts and holds its peer
	// connections' addresses through it. Set on message routing
	// virtuals only (nil elsewhere).
	SNATPools map[string][]*snatobj.Addr
	// SNATs is the commit's ltm snat objects, consulted when the virtual
	// translates nothing itself; nil when there are none.
	SNATs   *snatobj.Table
	SelfIPs []netip.Addr
	EvMask  uint32 // the proxy events the virtual's rules handle
	// NATs is the commit's enabled ltm nat objects, consulted before
	// SNATs; nil when there are none.
	NATs *natobj.Table
	// SNATArrival: a SNAT or NAT of the commit has a VLAN list, so
	// AdmitArrival reads each connection's arrival interface (the flow
	// keeps it in flows.Flow.Arrival for its source choice,
	// SNATSourceHeldOn).
	SNATArrival bool
	// SYN: the listener keeps the clients' SYNs (tcp-options, proxy-mss,
	// rules reading them), which each accepted connection reads once.
	SYN bool
	// ClientSSL counts the handshakes of each client-ssl profile
	// (profiles.go), in the order of Cfg.TLS.ClientProfiles.
	ClientSSL []*SSLCounters
	// SSLLog logs the failed handshakes (ssllog.go), the plane's.
	SSLLog *SSLLog
	// PF is the plane's packet filtering (net packet-filter,
	// dataplane/pktfilter), which Admit asks first; nil in tests that
	// build a snapshot alone.
	PF *pktfilter.Holder
	// Rate is the virtual's rate-limit (RateFor); nil for none.
	Rate *VirtualRate
	// Clone is the virtual's clone pools (CloneSet); nil for none.
	Clone *clone.Set
	// BWC is the virtual's bandwidth controller (bwc-policy); nil for
	// none.
	BWC *bwc.Policy
	// RateClass is the virtual's rate class (rate-class) when it has a
	// bwc-policy too: its flows' buckets chain the class's after the
	// policy's. A virtual with a rate class alone has it in BWC (a
	// class's policy, bwc/class.go), so every path that paces BWC's
	// flows paces the class's alike; nil otherwise.
	RateClass *bwc.Policy
	// LSN is the virtual's lsn pool (source-address-translation type
	// lsn, dataplane/lsn); nil for none, the only cost other virtuals
	// pay.
	LSN *lsn.Pool
	// Addr is the runtime of Cfg.Address (vaddr.go); nil when the
	// virtual's address does not act.
	Addr *VAddr
	// Evict is the virtual's flow-eviction-policy (evict.go); nil for
	// none, the only cost other virtuals pay.
	Evict *Evictor
	// Contexts are the route-domain and global flow-eviction contexts
	// the virtual is in (evict.go), asked before its own limit; nil for
	// none, the only cost other virtuals pay.
	Contexts []*EvictContext
	// DNS answers the queries of a virtual with a dns profile
	// (dataplane/dnsvs); nil without one, the only cost other virtuals
	// pay.
	DNS DNSService
}

// DNSService is how the data paths hand a dns profile's queries over,
// so that this package need not know the DNS engine.
type DNSService interface {
	// ServeUDP answers one client datagram b (valid during the call
	// only) that reached local over conn, the listener's socket, which
	// the answer leaves from (later, from another goroutine, when it
	// waits for a member). ifx is the datagram's arrival interface
	// (0: not read; it is read while snap.SNATArrival is set), which a
	// VLAN-limited SNAT's choice for the member query takes.
	ServeUDP(vs *Virtual, snap *VirtualSnap, conn *net.UDPConn, client, local netip.AddrPort, b []byte, ifx int)
	// ServeTCP runs one client connection to its end; ifx is its
	// arrival interface, as for ServeUDP.
	ServeTCP(vs *Virtual, snap *VirtualSnap, c *net.TCPConn, ifx int)
}

// Admit decides whether a new connection from client to local may enter
// the virtual (enabled, source filter, rate limit, connection limit, its
// virtual address's enabled and connection limit) and counts it; Leave
// counts its end.
func (vs *Virtual) Admit(snap *VirtualSnap, client, local netip.AddrPort) bool {
	ok, _ := vs.AdmitClass(snap, client, local)
	return ok
}

// AdmitClass is Admit with the rate class (full path; empty for none)
// the packet filter that let the connection or flow in names: the data
// paths that can shape it put it in that class.
func (vs *Virtual) AdmitClass(snap *VirtualSnap, client, local netip.AddrPort) (bool, string) {
	ok, cls, _ := vs.AdmitArrival(snap, client, local, nil)
	return ok, cls
}

// AdmitArrival is AdmitClass for a client whose arrival interface
// arrival reads (nil: not known): it is read only while a packet filter
// or the trusted list names a VLAN, or a SNAT or NAT has a VLAN list
// (SNATArrival), and returned as ifx (0 otherwise),
// for the refusal (Discards, Rejects) and the connection table
// (flows.Flow.Arrival, which established filtering matches again).
// arrival does not escape: passing a closure allocates nothing.
func (vs *Virtual) AdmitArrival(snap *VirtualSnap, client, local netip.AddrPort, arrival func() int) (ok bool, cls string, ifx int) {
	if set := snap.PF.Load(); set != nil { // packet filters: one atomic load when off
		if arrival != nil && snap.PF.Arrival() {
			ifx = arrival()
		}
		if ok, cls = snap.filterAdmits(client, local, ifx); !ok {
			return false, "", ifx
		}
	}
	if snap.SNATArrival && ifx == 0 && arrival != nil { // VLAN-limited SNATs and NATs: one boolean test when none
		ifx = arrival()
	}
	return vs.admit(snap, client, local), cls, ifx
}

func (vs *Virtual) admit(snap *VirtualSnap, client, local netip.AddrPort) bool {
	cfg := snap.Cfg
	if !cfg.Enabled || (cfg.Source.IsValid() && cfg.Source.Bits() > 0 && !cfg.Source.Contains(client.Addr())) {
		return false
	}
	if cfg.Match != nil && !cfg.Match.Admits(client) { // traffic-matching-criteria's source
		return false
	}
	if snap.Addr != nil && !cfg.Address.Enabled { // a disabled virtual address (vaddr.go)
		return false
	}
	if cfg.Reject { // a reject virtual: counted, then reset or dropped
		vs.Stats.Tot.Add(1)
		return false
	}
	if cfg.DownImmediate != "" && cfg.DownImmediate != config.DownNone && snap.Pool.Offline() {
		return false // service-down-immediate-action
	}
	if snap.Rate != nil && !snap.Rate.take(&vs.Rate, client.Addr(), local.Addr(), RateNow()) {
		vs.RateDropped.Add(1)
		return false
	}
	if snap.Contexts != nil && !vs.admitContexts(snap.Contexts) { // route domain, global (evict.go)
		return false
	}
	if snap.Evict != nil { // flow-eviction-policy (evict.go)
		if !vs.admitEvicting(snap.Evict) {
			return false
		}
	} else if !vs.Stats.TryOpen(cfg.ConnectionLimit) {
		return false
	}
	if snap.Addr != nil && !vs.enterAddress(snap) {
		return false
	}
	vs.Stats.Requests.Add(1)
	vs.Prof.Conns.Opened(vs.Stats.Cur.Load())
	vs.Spread.Conn(client.Addr())
	return true
}

// filterAdmits runs the packet filters over a new connection or flow,
// counting and logging their matches: false when one discards or
// rejects it (Discards tells which, for the refusal).
func (s *VirtualSnap) filterAdmits(client, local netip.AddrPort, ifx int) (bool, string) {
	p := pktfilter.Packet{Proto: s.proto(), Src: unmap(client), Dst: unmap(local), If: ifx}
	a, cls := s.PF.DecideClass(&p)
	return a == pktfilter.Accept, cls
}

// FilterQuery runs the packet filters over a datagram that makes no
// flow (a dns profile's query, answered by itself), counting and logging
// their matches: what they decide. The caller asks it only while
// filtering is on (PF.Load() not nil, once per batch).
func (s *VirtualSnap) FilterQuery(client, local netip.AddrPort, ifx int) pktfilter.Action {
	p := pktfilter.Packet{Proto: pktfilter.ProtoUDP, Src: unmap(client), Dst: unmap(local), If: ifx}
	return s.PF.Decide(&p)
}

// Discards reports whether the packet filters discard (rather than
// reject) a client the virtual refused: the refusal paths close it then
// without a reset (pktfilter.Discard). ifx is the arrival interface
// AdmitArrival read (0: none). It costs one atomic load while packet
// filtering is off.
func (s *VirtualSnap) Discards(client, local netip.AddrPort, ifx int) bool {
	return s.verdict(client, local, ifx) == pktfilter.Discard
}

// Rejects reports whether the packet filters reject a client the
// virtual refused: a UDP client is then told so with an ICMP port
// unreachable (dataplane/internal/icmpreject).
func (s *VirtualSnap) Rejects(client, local netip.AddrPort, ifx int) bool {
	return s.verdict(client, local, ifx) == pktfilter.Reject
}

func (s *VirtualSnap) verdict(client, local netip.AddrPort, ifx int) pktfilter.Action {
	if s == nil || s.PF.Load() == nil {
		return pktfilter.Accept
	}
	p := pktfilter.Packet{Proto: s.proto(), Src: unmap(client), Dst: unmap(local), If: ifx}
	return s.PF.Verdict(&p)
}

func (s *VirtualSnap) proto() uint8 {
	if s.Cfg.IsUDP() {
		return pktfilter.ProtoUDP
	}
	return pktfilter.ProtoTCP
}

func unmap(a netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()) }

// Plain reports whether the virtual's flows need nothing but the L4 proxy.
func (s *VirtualSnap) Plain() bool {
	return s.EvMask == 0 && s.BWC == nil && !s.PF.Classes() && s.LSN == nil && s.Cfg.MBLB == nil && s.Cfg.TLS == nil && s.Cfg.Stream == nil && s.Cfg.FTP == nil && s.Cfg.Socks == nil && s.Cfg.ILX == nil && s.Cfg.MQTT == nil && s.Cfg.FIX == nil && s.Cfg.RTSP == nil && s.Cfg.Diameter == nil && s.Cfg.MRF == nil && s.DNS == nil &&
		!s.Cfg.Persist.Peeks() && // ssl and msrdp persistence read the first bytes (l4/sslpersist.go)
		(s.Pool != nil || !s.Cfg.IPForward) // an ip-forward virtual without a pool dials where the client was going (l4/proxy.go)
}

// Offline reports whether no member of the pool can take a new
// connection: every one is down or forced offline, its virtuals'
// `Offline`. A nil or empty pool is not offline (its virtuals' status is
// unknown). It stops at the first member that is up, disabled or still
// checking.
func (p *Pool) Offline() bool {
	if p == nil {
		return false
	}
	s := p.Snap.Load()
	if s == nil || len(s.Members) == 0 {
		return false
	}
	for _, m := range s.Members {
		if m.Availability() < AvailDown {
			return false
		}
	}
	return true
}
