package gslb

import (
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// request is one wide IP question being decided.
type request struct {
	plan   *plan
	ldns   netip.Addr // the query's source address
	client netip.Addr // the EDNS client subnet address when used, else ldns
	// topoAddr is the address topology scores: client, or the EDNS
	// client subnet's under the wide IP's topology-prefer-edns0-client-subnet.
	topoAddr netip.Addr
	// ecs is the answer's copy of the query's client subnet option when
	// topoAddr came from it: a topology score sets its scope.
	ecs *dns.EDNS0_SUBNET
	// trace collects the decision log's segments (nil: not logged).
	trace *lbTrace
	now   time.Time
	cands [16]*member  // scratch for the available members of one pool
	pools [8]*pool     // scratch for the pool order
	topo  *topoMemo    // the reader's memo of topology scores (nil: none)
	pmemo *persistMemo // the reader's memo of persistence (nil: none)
	shard int          // the counters' shard this query adds to (counter)
	// geo is the client's geolocation, looked up once for the query by
	// the first topology record that asks (geoLDNS).
	geo geoAddr
	// prio are the member priorities a rule's member_priority set for
	// this query (nil: none; rules_gtm.go); qosw the quality-of-service
	// weights its qos_weight set (nil: the pools' own).
	prio []memberPrio
	qosw []qosOverride
	// persist is what a rule's persist enable or disable made of the
	// wide IP's persistence for this query (0: its own setting).
	persist int8
	// app is the wide IP's distributed application (nil: none), appWide
	// the wide IP; appMask where the application can answer (computed
	// once, when appMasked); appCut says the last available call left
	// members out for it; appDC the data center its persistence holds
	// the LDNS on (read once, when appDCRead), appHeld that it narrowed
	// the answer (distapp.go).
	app       *distApp
	appWide   *wideIP
	appTable  *appPersist
	appGen    uint64 // Server.avail when the query began
	appMask   appMask
	appDC     string
	appMasked bool
	appCut    bool
	appHeld   bool
	appDCRead bool
}

// persistOn says the query uses and records LDNS persistence: the wide
// IP's persistence, unless a rule's persist turned it on or off.
func (rq *request) persistOn(w *wideIP) bool {
	if rq.persist != 0 {
		return rq.persist > 0
	}
	return w.cfg.Persistence
}

// geoLDNS is the client's geolocation for topology scoring, nil when the
// plan has no geographic record.
func (rq *request) geoLDNS() *geoAddr {
	if !rq.plan.geoTopo {
		return nil
	}
	if rq.geo.store == nil {
		rq.geo = geoAddr{store: rq.plan.cfg.Geo, addr: rq.topoAddr}
	}
	return &rq.geo
}

// topoClient is the address topology scores. When it is the query's
// client subnet the answer now depends on it, so the echoed option's
// scope becomes the source prefix (RFC 7871 7.2.1): a resolver caches the
// answer for that subnet only.
func (rq *request) topoClient() netip.Addr {
	if rq.ecs != nil {
		rq.ecs.SourceScope = rq.ecs.SourceNetmask
	}
	return rq.topoAddr
}

type outcome uint8

const (
	outNone        outcome = iota // the method gave nothing: go on
	outAnswer                     // addresses to answer with
	outReturnToDNS                // answer from the static zones (BIND)
	outDrop                       // send nothing back
)

const maxInlineAnswers = 8

// decision is the result of resolving a wide IP. Its addresses live in
// the decision itself up to maxInlineAnswers (a slice into the struct
// would send every decision to the heap), beyond in more.
type decision struct {
	out    outcome
	n      int
	inline [maxInlineAnswers]netip.Addr
	more   []netip.Addr // all the addresses, once there are more than inline holds
	ttl    uint32
	pool   *pool
	member *member // nil for fallback-ip and name pools
	// targets are the answer of a CNAME, MX, SRV or NAPTR pool.
	targets []*nameMember
	level   int // 0 preferred, 1 alternate, 2 fallback, -1 persisted
}

// setAddr makes a the only address of the answer.
func (d *decision) setAddr(a netip.Addr) {
	d.inline[0], d.n, d.more = a, 1, nil
}

// addAddr adds a further address.
func (d *decision) addAddr(a netip.Addr) {
	switch {
	case d.more != nil:
		d.more = append(d.more, a)
	case d.n < len(d.inline):
		d.inline[d.n] = a
		d.n++
	default:
		d.more = append(append(make([]netip.Addr, 0, 2*d.n), d.inline[:d.n]...), a)
	}
}

// addrs lists the answer's addresses.
func (d *decision) addrs() []netip.Addr {
	if d.more != nil {
		return d.more
	}
	return d.inline[:d.n]
}

// Reasons, worded like BIG-IP's status reasons.
const (
	reasonAvailable     = "Available"
	reasonDCDisabled    = "The parent datacenter is disabled"
	reasonHostDisabled  = "The parent server is disabled"
	reasonVSDisabled    = "The virtual server is disabled"
	reasonLinkDisabled  = "The link is disabled"
	reasonLinkDown      = "The link is down"
	reasonLinkMonitor   = "The link's monitor found every router address down"
	reasonLinkLimit     = "The link has exceeded its bandwidth limit"
	reasonHostDown      = "The parent server is down"
	reasonHostLimit     = "The server has exceeded its connection limit"
	reasonHostCPU       = "The server has exceeded its CPU usage limit"
	reasonHostMem       = "The server has fallen below its available memory limit"
	reasonHostBps       = "The server has exceeded its bandwidth limit"
	reasonHostPps       = "The server has exceeded its packet rate limit"
	reasonVSDown        = "The virtual server is down"
	reasonVSMonitorDown = "Monitor has marked the virtual server down"
	reasonVSConnLimit   = "The virtual server has exceeded its connection limit"
	reasonVSBpsLimit    = "The virtual server has exceeded its bandwidth limit"
	reasonMemberOff     = "The pool member is disabled"
	reasonMemberLimit   = "The pool member has exceeded its connection limit"
	reasonMemberMonitor = "Pool member has been marked down by a monitor"
	reasonPoolDisabled  = "The pool is disabled"
	reasonPoolLimit     = "The pool has exceeded one of its limits"
	reasonPoolNoMembers = "No enabled pool members available"
	reasonPoolEmpty     = "The pool has no members"
	reasonWideIPOff     = "The wide IP is disabled"
	reasonNoPools       = "No enabled pools available"
	reasonLinkAvailable = "Available"
)

// linkState reports whether a link carries new users.
func linkState(l *link) (bool, string) {
	if l.cfg.Disabled || l.dc.cfg.Disabled {
		return false, reasonLinkDisabled
	}
	if l.routers != nil && l.routersDown() {
		return false, reasonLinkMonitor
	}
	m := l.rt.metrics.Load()
	if m == nil {
		return true, reasonLinkAvailable
	}
	if m.Status == StatusDown {
		return false, reasonLinkDown
	}
	c := l.cfg
	if (c.LimitInboundBps > 0 && m.InBps >= c.LimitInboundBps) ||
		(c.LimitOutboundBps > 0 && m.OutBps >= c.LimitOutboundBps) ||
		(c.LimitTotalBps > 0 && m.InBps+m.OutBps >= c.LimitTotalBps) {
		return false, reasonLinkLimit
	}
	return true, reasonLinkAvailable
}

// hostState reports whether a server's virtual servers can be answered.
func hostState(h *host) (bool, string) { return hostStateOf(h, false) }

// hostStateOf is hostState; drain leaves the server's own disabled out
// (a persisted LDNS draining from it).
func hostStateOf(h *host, drain bool) (bool, string) {
	if h.dc.cfg.Disabled {
		return false, reasonDCDisabled
	}
	if h.cfg.Disabled && !drain {
		return false, reasonHostDisabled
	}
	if Status(h.rt.status.Load()) == StatusDown {
		return false, reasonHostDown
	}
	if lim := h.cfg.LimitMaxConnections; lim > 0 {
		var sum int64
		for _, v := range h.vss {
			if m := v.rt.metrics.Load(); m != nil {
				sum += m.Connections
			}
		}
		if sum >= lim {
			return false, reasonHostLimit
		}
	}
	if c := h.cfg; c.LimitCPUUsage > 0 || c.LimitMemAvail > 0 || c.LimitMaxBps > 0 || c.LimitMaxPps > 0 {
		if why := hostOverLimit(h); why != "" {
			return false, why
		}
	}
	return true, reasonAvailable
}

// vsState reports whether a virtual server gets new users: its
// datacenter, server and link are up and enabled, it is, and none of them
// is over a limit.
func vsState(v *vs) (bool, string) { return vsStateOf(v, true, false) }

// vsStateOf is vsState; without verify (a pool's
// verify-member-availability disabled) the virtual server's up or down
// status, reported or probed, is not looked at: only what is disabled or
// over a limit keeps it out.
func vsStateOf(v *vs, verify, drain bool) (bool, string) {
	if ok, why := hostStateOf(v.host, drain); !ok {
		return false, why
	}
	if v.cfg.Disabled && !drain {
		return false, reasonVSDisabled
	}
	if v.link != nil {
		if ok, why := linkState(v.link); !ok {
			return false, why
		}
	}
	m := v.rt.metrics.Load()
	if verify && m != nil && m.Status == StatusDown {
		return false, reasonVSDown
	}
	if verify && Status(v.rt.probe.Load()) == StatusDown && (m == nil || m.Status != StatusUp) {
		return false, reasonVSMonitorDown
	}
	if m != nil {
		if lim := v.cfg.LimitMaxConnections; lim > 0 && m.Connections >= lim {
			return false, reasonVSConnLimit
		}
		if lim := v.cfg.LimitMaxBps; lim > 0 && m.Bps >= lim {
			return false, reasonVSBpsLimit
		}
	}
	return true, reasonAvailable
}

func memberState(m *member) (bool, string) { return memberStateOf(m, false) }

// memberStateOf is memberState; drain leaves out what the operator
// disabled (the member, its virtual server, its server), for an LDNS
// persisted on it under drain-persistent-requests.
func memberStateOf(m *member, drain bool) (bool, string) {
	if m.cfg.Disabled && !drain {
		return false, reasonMemberOff
	}
	verify := m.pool.verify
	if verify && m.pool.cfg.ManualResume && m.held() {
		return false, reasonManualResume
	}
	if ok, why := vsStateOf(m.vs, verify, drain); !ok {
		return false, why
	}
	if verify && Status(m.rt.probe.Load()) == StatusDown {
		return false, reasonMemberMonitor
	}
	if lim := m.cfg.LimitMaxConnections; lim > 0 {
		if x := m.vs.rt.metrics.Load(); x != nil && x.Connections >= lim {
			return false, reasonMemberLimit
		}
	}
	return true, reasonAvailable
}

// available fills rq.cands (or a larger slice) with the pool's available
// members, in member-order.
func (rq *request) available(pl *pool) []*member {
	out := rq.cands[:0]
	for _, m := range pl.members {
		if ok, _ := memberState(m); ok {
			out = append(out, m)
		}
	}
	if rq.app != nil {
		out = rq.appFilter(out)
	}
	if rq.prio != nil {
		rq.byPriority(pl, out)
	}
	return out
}

func poolState(pl *pool) (bool, string) {
	if pl.cfg.Disabled {
		return false, reasonPoolDisabled
	}
	if pl.typ.named() {
		if len(pl.names) == 0 {
			return false, reasonPoolEmpty
		}
		up := 0
		for _, m := range pl.names {
			if ok, _ := nameState(m); ok {
				up++
			}
		}
		switch {
		case up == 0:
			return false, reasonPoolNoMembers
		case up < pl.minUp:
			return false, reasonPoolMinUp
		}
		return true, reasonAvailable
	}
	if len(pl.members) == 0 {
		return false, reasonPoolEmpty
	}
	if pl.minUp > 0 {
		up := 0
		for _, m := range pl.members {
			if ok, _ := memberState(m); ok {
				up++
			}
		}
		if up < pl.minUp {
			return false, reasonPoolMinUp
		}
	}
	if c := pl.cfg; c.LimitMaxConnections > 0 || c.LimitMaxBps > 0 || c.LimitMaxPps > 0 {
		var conns, bps, pps int64
		for _, m := range pl.members {
			if x := m.vs.rt.metrics.Load(); x != nil {
				conns, bps, pps = conns+x.Connections, bps+x.Bps, pps+x.PacketRate
			}
		}
		if (c.LimitMaxConnections > 0 && conns >= c.LimitMaxConnections) || (c.LimitMaxBps > 0 && bps >= c.LimitMaxBps) ||
			(c.LimitMaxPps > 0 && pps >= c.LimitMaxPps) {
			return false, reasonPoolLimit
		}
	}
	for _, m := range pl.members {
		if ok, _ := memberState(m); ok {
			return true, reasonAvailable
		}
	}
	return false, reasonPoolNoMembers
}

func wideIPState(w *wideIP) (bool, string) {
	if w.cfg.Disabled {
		return false, reasonWideIPOff
	}
	for _, wp := range w.pools {
		if ok, _ := poolState(wp.pool); ok {
			return true, reasonAvailable
		}
	}
	return false, reasonNoPools
}

// resolve runs the wide IP's load-balancing hierarchy for one question:
// persistence, then the pools in pool-lb-mode order, each with its
// preferred, alternate and fallback methods, then the last resort pool,
// then return to DNS. The wide IP's counters of how the query ended
// (resolved, returned to DNS, dropped) are left to the caller, as an
// LB_FAILED or LB_SELECTED rule may still change the outcome.
func (s *Server) resolve(rq *request, w *wideIP, d *decision) {
	if w.app != nil && !s.appStart(rq, w, d) {
		return
	}
	if w.dlog != 0 {
		s.resolveLogged(rq, w, d, nil)
		return
	}
	s.resolveLB(rq, w, d)
}

// resolveLB is resolve's decision.
func (s *Server) resolveLB(rq *request, w *wideIP, d *decision) {
	rt := w.rt
	if rq.persistOn(w) && s.persisted(rq, w, d) {
		rt.persisted.Inc(rq.shard)
		if t := rq.trace; t != nil {
			t.poolEnd(d.pool, "persistence", d)
			t.chosen(d, "persistence")
		}
		return
	}
	for _, pl := range s.poolOrder(rq, w) {
		s.resolvePool(rq, pl, d)
		if rq.trace != nil {
			rq.trace.poolEnd(pl, string(w.mode), d)
		}
		if d.out != outNone {
			s.finish(rq, w, d)
			return
		}
	}
	if lr := w.lastResort; lr != nil {
		s.resolvePool(rq, lr, d)
		if rq.trace != nil {
			rq.trace.poolEnd(lr, "last-resort-pool", d)
		}
		if d.out != outNone {
			rt.lastResort.Inc(rq.shard)
			s.finish(rq, w, d)
			return
		}
	}
	d.out = outReturnToDNS
}

// resolveIn load balances over one pool a rule chose; when it gives
// nothing the query returns to DNS.
func (s *Server) resolveIn(rq *request, w *wideIP, pl *pool, d *decision) {
	if w.app != nil && !s.appStart(rq, w, d) {
		return
	}
	if w.dlog != 0 {
		s.resolveLogged(rq, w, d, pl)
		return
	}
	s.resolveInLB(rq, w, pl, d)
}

// resolveInLB is resolveIn's decision.
func (s *Server) resolveInLB(rq *request, w *wideIP, pl *pool, d *decision) {
	s.resolvePool(rq, pl, d)
	if rq.trace != nil {
		rq.trace.poolEnd(pl, "iRule", d)
	}
	if d.out == outNone {
		d.out = outReturnToDNS
		return
	}
	s.finish(rq, w, d)
}

// ended counts how a wide IP's query ended, once per query, in shard sh.
func (r *wipRT) ended(out outcome, sh int) {
	switch out {
	case outAnswer:
		r.resolved.Inc(sh)
	case outReturnToDNS:
		r.returnedToDNS.Inc(sh)
	case outDrop:
		r.dropped.Inc(sh)
	}
}

// finish counts an answer's method level and records its persistence.
func (s *Server) finish(rq *request, w *wideIP, d *decision) {
	rt := w.rt
	if d.out == outAnswer {
		switch d.level {
		case 0:
			rt.preferred.Inc(rq.shard)
		case 1:
			rt.alternate.Inc(rq.shard)
		case 2:
			rt.fallback.Inc(rq.shard)
		}
		if rq.persistOn(w) && d.member != nil {
			s.persist.put(persistKey{w.path, maskAddr(rq.client, w.cidr4, w.cidr6)}, d, rq.now.Add(w.persistTTL), rq.now)
		}
		if rq.app != nil && rq.app.cfg.Persistence {
			s.appRecord(rq, d)
		}
	}
}

// persisted answers from the LDNS's persistence record when its member is
// still available.
func (s *Server) persisted(rq *request, w *wideIP, d *decision) bool {
	key := maskAddr(rq.client, w.cidr4, w.cidr6)
	now := rq.now.UnixNano()
	expires := now + int64(w.persistTTL)
	pl, m := s.persistedMember(rq, w, key, now, expires)
	if m == nil || pl.cfg.Disabled {
		return false
	}
	if ok, _ := memberStateOf(m, !rq.plan.settings.NoDrainPersistent); !ok {
		return false
	}
	if rq.app != nil && (rq.app.off[m] || rq.app.depends() && !rq.appAllows(m)) {
		return false
	}
	d.pool, d.member, d.level, d.ttl = pl, m, -1, pl.ttl
	d.setAddr(m.vs.addr)
	if pl.maxAnswers > 1 {
		cands := rq.available(pl)
		for i, c := range cands {
			if c == m {
				addMore(d, cands, i, pl.maxAnswers)
				break
			}
		}
	}
	d.out = outAnswer
	m.vs.rt.picks.Inc(rq.shard)
	return true
}

// persistedMember finds the pool and member of the LDNS's live record
// (nil when there is none, or the plan has no such member), from the
// reader's memo when it holds that record, else from the table.
func (s *Server) persistedMember(rq *request, w *wideIP, key netip.Prefix, now, expires int64) (*pool, *member) {
	pm := rq.pmemo
	if pm != nil && pm.rec != nil && pm.plan == rq.plan && pm.w == w && pm.key == key && pm.rec.live(now) {
		pm.rec.touch(now, expires)
		return pm.pl, pm.m
	}
	r := s.persist.get(persistKey{w.path, key}, now, expires)
	if r == nil {
		return nil, nil
	}
	pl := rq.plan.pools[r.pool]
	var m *member
	if pl != nil {
		for _, c := range pl.members {
			if c.name == r.member {
				m = c
				break
			}
		}
	}
	if pm != nil {
		*pm = persistMemo{plan: rq.plan, w: w, key: key, rec: r, pl: pl, m: m}
	}
	return pl, m
}

// poolOrder lists the wide IP's pools in the order pool-lb-mode tries
// them: available pools first, by the method, then the others (whose
// fallback-ip may still answer).
func (s *Server) poolOrder(rq *request, w *wideIP) []*pool {
	out := rq.pools[:0]
	var down []*pool
	for _, wp := range w.pools {
		ok, why := poolState(wp.pool)
		if rq.trace != nil {
			rq.trace.poolCheck(wp.pool, ok, why)
		}
		if ok {
			out = append(out, wp.pool)
		} else if !wp.pool.cfg.Disabled {
			down = append(down, wp.pool)
		}
	}
	n := len(out)
	if n > 1 {
		switch w.mode {
		case RoundRobin:
			rotate(out, int(w.rt.rr.Add(1)-1)%n)
		case Ratio:
			total := 0
			for _, wp := range w.pools {
				if contains(out, wp.pool) {
					total += wp.ratio
				}
			}
			x := int((w.rt.rr.Add(1) - 1) % uint64(total))
			for _, wp := range w.pools {
				if !contains(out, wp.pool) {
					continue
				}
				if x < wp.ratio {
					moveFirst(out, wp.pool)
					break
				}
				x -= wp.ratio
			}
		case Topology:
			s.topologyPools(rq, w, out)
		}
	}
	if w.mode == Topology && rq.plan.settings.TopologyDenyZeroScores {
		kept := out[:0]
		for _, pl := range out {
			if sc, _ := rq.plan.topoScore(rq.topoClient(), topoTarget{pool: pl.full}, rq.geoLDNS()); sc > 0 {
				kept = append(kept, pl)
			}
		}
		out = kept
	}
	return append(out, down...)
}

// topologyPools sorts pools by topology score, highest first; equal
// scores take turns.
func (s *Server) topologyPools(rq *request, w *wideIP, out []*pool) {
	var scores [len(request{}.pools)]int
	sc := scores[:0]
	if len(out) > len(scores) {
		sc = make([]int, 0, len(out))
	}
	for _, pl := range out {
		v, _ := rq.plan.topoScore(rq.topoClient(), topoTarget{pool: pl.full}, rq.geoLDNS())
		sc = append(sc, v)
		if rq.trace != nil {
			rq.trace.poolScore(pl, v)
		}
	}
	// Stable insertion sort by score: pools are few.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && sc[j] > sc[j-1]; j-- {
			sc[j], sc[j-1] = sc[j-1], sc[j]
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	ties := 1
	for ties < len(out) && sc[ties] == sc[0] {
		ties++
	}
	if ties > 1 {
		rotate(out[:ties], int(w.rt.rr.Add(1)-1)%ties)
	}
}

func contains(ps []*pool, p *pool) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func moveFirst(ps []*pool, p *pool) {
	for i, x := range ps {
		if x == p {
			copy(ps[1:i+1], ps[:i])
			ps[0] = p
			return
		}
	}
}

func rotate[T any](xs []T, k int) {
	if k == 0 || len(xs) < 2 {
		return
	}
	reverse(xs[:k])
	reverse(xs[k:])
	reverse(xs)
}

func reverse[T any](xs []T) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// resolvePool runs one pool's preferred, alternate and fallback methods.
// A pool with no available member only gets its fallback-ip, so that
// return-to-dns in an empty pool does not stop the search for a pool
// that has members up.
// addMore adds the available members after cands[i], in turn, until the
// answer has max addresses (max-answers-returned); an address already
// in the answer is not repeated.
func addMore(d *decision, cands []*member, i, max int) {
	for k := 1; k < len(cands) && len(d.addrs()) < max; k++ {
		x := cands[(i+k)%len(cands)].vs.addr
		dup := false
		for _, a := range d.addrs() {
			dup = dup || a == x
		}
		if !dup {
			d.addAddr(x)
		}
	}
}

func (s *Server) resolvePool(rq *request, pl *pool, d *decision) {
	d.out = outNone
	if pl.cfg.Disabled {
		return
	}
	if rq.trace != nil {
		rq.trace.memberChecks(pl)
	}
	if pl.typ.named() {
		s.resolveNames(rq, pl, d)
		if rq.trace != nil && d.out != outNone {
			rq.trace.chosen(d, [3]Mode{pl.mode, pl.alt, pl.fb}[max(d.level, 0)])
		}
		return
	}
	cands := rq.available(pl)
	if len(cands) == 0 && rq.appCut {
		// Its members are up where the application cannot answer from:
		// the pool gives nothing, the next one is tried [M].
		if rq.trace != nil {
			rq.trace.levelSkipped(pl.mode, 0, "the distributed application's dependency leaves no member")
		}
		return
	}
	noneUp := len(cands) == 0
	if len(cands) < pl.minUp {
		cands = cands[:0] // unavailable: only a fallback-ip answers
	}
	modes := [3]Mode{pl.mode, pl.alt, pl.fb}
	for level, mode := range modes {
		if level == 2 && noneUp && !rq.plan.settings.RespectFallback && memberMethod(mode) {
			cands = rq.enabled(pl) // the fallback method ignores availability
		}
		if len(cands) == 0 && mode != FallbackIP {
			if rq.trace != nil {
				rq.trace.levelSkipped(mode, level, "no pool member is available")
			}
			continue
		}
		switch mode {
		case None:
			continue
		case ReturnToDNS:
			pl.rt.returnToDNS.Inc(rq.shard)
			d.out, d.level = outReturnToDNS, level
			if rq.trace != nil {
				rq.trace.chosen(d, mode)
			}
			return
		case DropPacket:
			pl.rt.dropped.Inc(rq.shard)
			d.out, d.level = outDrop, level
			if rq.trace != nil {
				rq.trace.chosen(d, mode)
			}
			return
		case FallbackIP:
			if !pl.cfg.FallbackIP.IsValid() || pl.cfg.FallbackIP.IsUnspecified() {
				if rq.trace != nil {
					rq.trace.levelSkipped(mode, level, "no fallback-ip")
				}
				continue
			}
			d.out, d.pool, d.member, d.level, d.ttl = outAnswer, pl, nil, level, pl.ttl
			d.setAddr(pl.cfg.FallbackIP)
			countLevel(pl.rt, nil, level, rq.shard)
			if rq.trace != nil {
				rq.trace.chosen(d, mode)
			}
			return
		}
		i := s.pick(rq, pl, mode, cands)
		if i < 0 {
			if rq.trace != nil {
				rq.trace.levelSkipped(mode, level, "no metric or score decided")
			}
			continue
		}
		m := cands[i]
		d.out, d.pool, d.member, d.level, d.ttl = outAnswer, pl, m, level, pl.ttl
		d.setAddr(m.vs.addr)
		addMore(d, cands, i, pl.maxAnswers)
		countLevel(pl.rt, m.rt, level, rq.shard)
		m.vs.rt.picks.Inc(rq.shard)
		m.vs.host.rt.picks.Inc(rq.shard)
		if m.vs.link != nil {
			m.vs.link.rt.picks.Inc(rq.shard)
		}
		if rq.trace != nil {
			rq.trace.chosen(d, mode)
		}
		return
	}
}

func countLevel(p *poolRT, m *memberRT, level, sh int) {
	switch level {
	case 0:
		p.preferred.Inc(sh)
		if m != nil {
			m.preferred.Inc(sh)
		}
	case 1:
		p.alternate.Inc(sh)
		if m != nil {
			m.alternate.Inc(sh)
		}
	default:
		p.fallback.Inc(sh)
		if m != nil {
			m.fallback.Inc(sh)
		}
	}
}

// pick runs one member method over the available members and returns the
// chosen index, or -1 when the method has no answer (missing metrics, no
// topology match, a method openltm does not measure).
func (s *Server) pick(rq *request, pl *pool, mode Mode, cands []*member) int {
	switch mode {
	case RoundRobin:
		return int((pl.rt.rr.Add(1) - 1) % uint64(len(cands)))
	case Ratio:
		total := 0
		for _, m := range cands {
			total += m.ratio
		}
		x := int((pl.rt.rr.Add(1) - 1) % uint64(total))
		for i, m := range cands {
			if x < m.ratio {
				return i
			}
			x -= m.ratio
		}
		return 0
	case GlobalAvailability:
		return 0
	case Topology:
		return s.pickTopology(rq, pl, cands)
	case StaticPersistence:
		return pickStatic(rq, cands)
	case LowestRoundTripTime:
		return s.pickRTT(rq, pl, cands)
	case LeastConnections:
		return pickMetric(pl, cands, false, func(m *VSMetrics, _ *vs) int64 { return m.Connections })
	case KilobytesPerSecond:
		return pickMetric(pl, cands, false, func(m *VSMetrics, _ *vs) int64 { return m.Bps })
	case PacketRate:
		return pickMetric(pl, cands, false, func(m *VSMetrics, _ *vs) int64 { return m.PacketRate })
	case VirtualServerCapacity:
		return pickMetric(pl, cands, true, func(m *VSMetrics, _ *vs) int64 {
			if m.Capacity <= 0 {
				return -1
			}
			return int64(m.Capacity)
		})
	case CPU:
		return pickValue(pl, cands, false, hostCPU)
	case QualityOfService:
		return s.pickQoS(rq, pl, cands)
	case VirtualServerScore:
		best, ties := int64(-1<<62), 0
		var idx [16]int
		for i, m := range cands {
			sc := int64(m.vs.cfg.Score)
			if sc > best {
				best, ties = sc, 0
			}
			if sc == best && ties < len(idx) {
				idx[ties] = i
				ties++
			}
		}
		return idx[int((pl.rt.rr.Add(1)-1)%uint64(ties))]
	}
	return -1
}

// pickQoS is quality-of-service: each candidate scores the sum of its
// metrics, each normalised against the best candidate's (lowest for round
// trip, packet rate and throughput, highest for the others) and weighed by
// the pool's qos-* coefficient (as this query's rules left them,
// qos_weight); the highest score wins, ties take turns. A metric no
// candidate has is left out; with none known at all the method has no
// answer and the next level decides, as for the other dynamic methods.
func (s *Server) pickQoS(rq *request, pl *pool, cands []*member) int {
	var scoreBuf [64]float64
	w := pl.qos
	if rq.qosw != nil {
		w = weighed(pl, rq.qosw)
	}
	scores, known := s.qosScores(rq, &w, cands, scoreBuf[:0])
	if !known {
		return -1
	}
	if pl.cfg.DynamicRatio {
		return ratioPick(pl, scores)
	}
	var idx [16]int
	ties := 0
	top := -1.0
	for i, sc := range scores {
		if sc > top {
			top, ties = sc, 0
		}
		if sc == top && ties < len(idx) {
			idx[ties] = i
			ties++
		}
	}
	return idx[int((pl.rt.rr.Add(1)-1)%uint64(ties))]
}

// qosScores appends to out each candidate's quality-of-service score
// under the weights w (pickQoS, and qos_score for one member); known
// says whether any weighed metric was known of any candidate. A metric
// a candidate lacks adds nothing to its score.
func (s *Server) qosScores(rq *request, w *QoSWeights, cands []*member, out []float64) (_ []float64, known bool) {
	n := len(cands)
	var rttBuf [64]time.Duration
	var rtts []time.Duration
	if w.RTT > 0 || w.HitRatio > 0 || w.Hops > 0 {
		rtts = s.pathRTTs(rq, cands, rttBuf[:0])
	}
	var hitBuf [64]float64
	var hits []float64
	if w.HitRatio > 0 {
		hits = s.pathHits(rq, cands, hitBuf[:0])
	}
	var hopBuf [64]float64
	var hops []float64
	if w.Hops > 0 {
		hops = s.pathHops(rq, cands, hopBuf[:0])
	}
	// Per metric: each candidate's value (<0: unknown), and whether lower
	// is better.
	type metric struct {
		weight int
		lower  bool
		val    func(i int) float64
	}
	vsm := func(i int) *VSMetrics { return cands[i].vs.rt.metrics.Load() }
	metrics := [...]metric{
		{w.RTT, true, func(i int) float64 {
			if rtts == nil || rtts[i] <= 0 {
				return -1
			}
			return float64(rtts[i])
		}},
		{w.HitRatio, false, func(i int) float64 {
			if hits == nil {
				return -1
			}
			return hits[i]
		}},
		{w.Hops, true, func(i int) float64 {
			if hops == nil {
				return -1
			}
			return hops[i]
		}},
		{w.PacketRate, true, func(i int) float64 {
			if m := vsm(i); m != nil {
				return float64(m.PacketRate)
			}
			return -1
		}},
		{w.Kbps, true, func(i int) float64 {
			if m := vsm(i); m != nil {
				return float64(m.Bps)
			}
			return -1
		}},
		{w.VSCapacity, false, func(i int) float64 {
			if m := vsm(i); m != nil && m.Capacity > 0 {
				return float64(m.Capacity)
			}
			return -1
		}},
		{w.VSScore, false, func(i int) float64 { return float64(cands[i].vs.cfg.Score) }},
		{w.Topology, false, func(i int) float64 {
			if rq.topo != nil {
				return float64(rq.topo.score(rq.plan, rq.topoClient(), cands[i], rq.geoLDNS()))
			}
			sc, _ := rq.plan.topoScore(rq.topoClient(), cands[i].topoTarget(), rq.geoLDNS())
			return float64(sc)
		}},
		{w.LinkCapacity, false, func(i int) float64 { return linkFree(cands[i].vs.link) }},
	}
	base := len(out)
	for range n {
		out = append(out, 0)
	}
	scores := out[base:]
	var vals [64]float64
	for _, m := range metrics {
		if m.weight <= 0 {
			continue
		}
		v := vals[:0]
		best, any := 0.0, false
		for i := range n {
			x := m.val(i)
			v = append(v, x)
			if x < 0 {
				continue
			}
			if !any || (m.lower && x < best) || (!m.lower && x > best) {
				best, any = x, true
			}
		}
		if !any || (!m.lower && best <= 0) {
			continue // nobody has it (or every score is 0): nothing to weigh
		}
		known = true
		for i, x := range v {
			switch {
			case x < 0:
			case m.lower && x <= 0:
				scores[i] += float64(m.weight) // nothing at all is the best there is
			case m.lower:
				scores[i] += float64(m.weight) * best / x
			default:
				scores[i] += float64(m.weight) * x / best
			}
		}
	}
	return out, known
}

// linkFree is the share of a link's tightest bandwidth limit still free,
// from the link's reported throughput; -1 when the link has no limit or
// no report (nothing to weigh).
func linkFree(l *link) float64 {
	if l == nil {
		return -1
	}
	m := l.rt.metrics.Load()
	if m == nil {
		return -1
	}
	free := -1.0
	use := func(limit, used int64) {
		if limit <= 0 {
			return
		}
		f := max(float64(limit-used)/float64(limit), 0)
		if free < 0 || f < free {
			free = f
		}
	}
	use(l.cfg.LimitInboundBps, m.InBps)
	use(l.cfg.LimitOutboundBps, m.OutBps)
	use(l.cfg.LimitTotalBps, m.InBps+m.OutBps)
	return free
}

// pickMetric picks the member with the lowest (or highest) metric among
// those that reported one; equal values take turns. A metric below 0
// counts as not reported.
func pickMetric(pl *pool, cands []*member, highest bool, val func(*VSMetrics, *vs) int64) int {
	return pickValue(pl, cands, highest, func(c *member) int64 {
		m := c.vs.rt.metrics.Load()
		if m == nil {
			return -1
		}
		return val(m, c.vs)
	})
}

// hostCPU is the cpu method's figure for a member: the CPU usage its gtm
// server last reported of itself, -1 when it reported none. Every
// virtual server of one server shares it, so they take turns.
func hostCPU(c *member) int64 {
	if hm := c.vs.host.rt.metrics.Load(); hm != nil {
		return hm.CPUUsage
	}
	return -1
}

// pickValue is pickMetric over any per-member figure (below 0: not
// reported), so the methods judged on a server's report rank and share
// as those judged on a virtual server's.
func pickValue(pl *pool, cands []*member, highest bool, val func(*member) int64) int {
	var idx [16]int
	ties := 0
	var best int64
	for i, c := range cands {
		v := val(c)
		if v < 0 {
			continue
		}
		better := ties == 0 || (highest && v > best) || (!highest && v < best)
		if better {
			best, ties = v, 0
		}
		if v == best && ties < len(idx) {
			idx[ties] = i
			ties++
		}
	}
	if ties == 0 {
		return -1
	}
	if pl.cfg.DynamicRatio {
		var buf [16]float64
		w := buf[:0]
		if len(cands) > len(buf) {
			w = make([]float64, 0, len(cands))
		}
		for _, c := range cands {
			w = append(w, dynWeight(float64(val(c)), float64(best), !highest))
		}
		return ratioPick(pl, w)
	}
	return idx[int((pl.rt.rr.Add(1)-1)%uint64(ties))]
}

func (s *Server) pickTopology(rq *request, pl *pool, cands []*member) int {
	return pickBestScore(pl, len(cands), rq.plan.settings.TopologyDenyZeroScores, func(i int) int {
		if rq.topo != nil {
			return rq.topo.score(rq.plan, rq.topoClient(), cands[i], rq.geoLDNS())
		}
		sc, _ := rq.plan.topoScore(rq.topoClient(), cands[i].topoTarget(), rq.geoLDNS())
		return sc
	})
}

// pickBestScore is topology's choice among n candidates of a pool (an
// address pool's members or a name pool's): the highest score, ties
// taking turns on the pool's round robin, a score of zero or less left
// out when deny (topology-allow-zero-scores no); -1 when none is left.
func pickBestScore(pl *pool, n int, deny bool, score func(i int) int) int {
	var idx [16]int
	ties, best := 0, -1
	for i := 0; i < n; i++ {
		sc := score(i)
		if sc <= 0 && deny {
			continue
		}
		if sc > best {
			best, ties = sc, 0
		}
		if sc == best && ties < len(idx) {
			idx[ties] = i
			ties++
		}
	}
	if ties == 0 {
		return -1
	}
	return idx[int((pl.rt.rr.Add(1)-1)%uint64(ties))]
}

// pickStatic is static-persistence: highest-random-weight hashing of the
// masked LDNS address with each member's name, so one LDNS keeps its
// member while that member is up, and only the LDNSes of a member that
// goes down move.
func pickStatic(rq *request, cands []*member) int {
	return staticHRW(rq, len(cands), func(i int) string { return cands[i].name })
}

// staticHRW is the highest-random-weight choice among n members named
// by name, for the masked LDNS of rq: address pools' members by their
// server:vs names, name pools' by their targets.
func staticHRW(rq *request, n int, name func(int) string) int {
	st := rq.plan.settings
	a := maskAddr(rq.client, st.StaticPersistCIDR4, st.StaticPersistCIDR6).Addr()
	b := a.As16()
	h0 := uint64(14695981039346656037)
	for _, x := range b {
		h0 ^= uint64(x)
		h0 *= 1099511628211
	}
	best, bi := uint64(0), 0
	for i := range n {
		h, nm := h0, name(i)
		for j := 0; j < len(nm); j++ {
			h ^= uint64(nm[j])
			h *= 1099511628211
		}
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		if i == 0 || h > best {
			best, bi = h, i
		}
	}
	return bi
}

// maskAddr is the address's prefix of bits4 (IPv4) or bits6 (IPv6) bits.
func maskAddr(a netip.Addr, bits4, bits6 int) netip.Prefix {
	a = a.Unmap()
	bits := bits6
	if a.Is4() {
		bits = bits4
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.PrefixFrom(a, a.BitLen())
	}
	return p
}
