package gslb

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules"
)

// iRules on listeners and wide IPs. A listener's rules run DNS_REQUEST
// when a query arrives and DNS_RESPONSE before its answer goes; a wide
// IP's (of every type: A, AAAA, CNAME, MX, SRV, NAPTR) run DNS_REQUEST
// before load balancing, LB_SELECTED or LB_FAILED after it, and may
// choose the answer (pool, cname, and host for address wide IPs) or end
// it (DNS::return, DNS::drop) in those, then DNS_RESPONSE on the answer
// before the listener's. Queries go
// through dns.Msg whenever any rule is configured (answerWire is skipped),
// and through none of this when none is.

// via is where a query arrived: the listener (its rules) and the query's
// length on the wire (DNS::len; 0 when unknown).
type via struct {
	key  listenerKey
	qlen int
	wire []byte    // the query as received, for a NOTIFY's TSIG; nil over TCP
	l    *Listener // the listener's dns profile steps, nil for none (listener_dns.go)
	port uint16    // the client's port, for the connection table's row of a waiting query
}

// ruleConn is a query as rules see it: rules.Conn and rules.DNSConn.
type ruleConn struct {
	s     *Server
	p     *plan
	q     *dns.Msg
	resp  *dns.Msg
	src   netip.Addr
	local netip.AddrPort
	tcp   bool
	qlen  int
	// wide is set while a wide IP's rules run: the choices are theirs;
	// wideType is that wide IP's type, whose pools `pool` names.
	wide     bool
	wideType RRType
	// w is the wide IP whose rules ran for this query, if any: its
	// DNS_RESPONSE runs on the answer before the listener's.
	w *wideIP
	// lb is a copy of the load-balancing decision in LB_SELECTED and
	// LB_FAILED (LB::server), hasLB false before load balancing; a copy,
	// so that the decision of a query without rules stays on the stack.
	lb    decision
	hasLB bool
	// event is the wide IP event running (LB::reselect is taken in
	// LB_FAILED only).
	event rules.Event
	// What the rules did.
	drop, ret bool
	pool      string
	cname     string
	host      netip.Addr
	// reselect is LB::reselect in LB_FAILED: load balance again over
	// reselPool (a Key; "" for the pools load balancing tried last), or
	// answer reselMember of it when valid, and run the LB event again.
	reselect    bool
	reselPool   string
	reselMember *member
	// svc is what DNS::disable, DNS::enable and DNS::last_act asked of
	// the dns profile for this query; virtual is set for an LTM
	// virtual's rules (svc acts on all of it), else a listener's rules
	// may skip the wide IPs and DNS Express alone. origin is what built
	// the response DNS_RESPONSE sees ("": worked out, DNSOrigin), log
	// the dns profile's logging profile (DNS::log; nil: none).
	svc     Services
	virtual bool
	origin  string
	rpz     string // DNS::rpz_policy: the cache's response policy applied ("": none)
	log     func(id uint16, msg string)
	// clone takes an LTM virtual's rule's clone command (Clone); nil on
	// a listener's and without one.
	clone rules.Cloner
	// ttl is the TTL a rule's ttl gave the wide IP's answer (ttlSet);
	// prio the member priorities its member_priority set (rules_gtm.go);
	// qosw the quality-of-service weights its qos_weight set, and at
	// what qos_score computes with.
	ttl    uint32
	ttlSet bool
	prio   []memberPrio
	qosw   []qosOverride
	// persist is the rule's persist enable (1) or disable (-1) of the
	// wide IP's persistence for this query; 0 leaves it as configured.
	persist int8
	at      queryAt
	// sessions are the rule states of this query, one per program, so
	// that a variable a wide IP's DNS_REQUEST sets is there in its
	// LB_FAILED and DNS_RESPONSE, as BIG-IP keeps a flow's variables.
	sessions []progState
}

// progState is one program's rule state for a query.
type progState struct {
	prog *rules.Program
	st   *rules.ConnState
}

// state is the rule state of prog for this query, made on first use.
func (c *ruleConn) state(prog *rules.Program) *rules.ConnState {
	for _, ps := range c.sessions {
		if ps.prog == prog {
			return ps.st
		}
	}
	st := prog.NewConnState(c)
	c.sessions = append(c.sessions, progState{prog, st})
	return st
}

// release ends the query's rule states.
func (c *ruleConn) release() {
	for _, ps := range c.sessions {
		ps.st.Release()
	}
	c.sessions = nil
}

// choose clears the rule's earlier choice: the last of pool, host,
// cname and LB::reselect in an event is the one carried out.
func (c *ruleConn) choose() {
	c.pool, c.cname, c.host = "", "", netip.Addr{}
	c.reselect, c.reselPool, c.reselMember = false, "", nil
}

// maxReselects bounds the LB::reselect a query's LB_FAILED takes: a
// rule that reselects whatever happens cannot loop; past the bound the
// query ends as load balancing left it.
const maxReselects = 4

var errNotDNS = errors.New("not valid on a DNS listener")

func (c *ruleConn) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient:
		return netip.AddrPortFrom(c.src, 0)
	case rules.EndVirtual:
		return c.local
	}
	return netip.AddrPort{}
}

func (c *ruleConn) Protocol() int {
	if c.tcp {
		return 6
	}
	return 17
}

func (c *ruleConn) Decide(d rules.Decision) error {
	switch d.Kind {
	case rules.DecideDrop, rules.DecideDiscard:
		c.drop = true
		return nil
	case rules.DecidePool:
		if !c.wide {
			return fmt.Errorf("pool %s: a gtm pool is chosen in a wide IP's DNS_REQUEST, LB_SELECTED or LB_FAILED", d.Pool)
		}
		name := fullPath(d.Pool)
		typ := c.wideType
		if typ == "" {
			typ = TypeA
		}
		if c.p.pools[Key(typ, name)] == nil {
			return fmt.Errorf("pool %s: no such gtm pool %s", name, strings.ToLower(string(typ)))
		}
		c.choose()
		c.pool = Key(typ, name)
		return nil
	case rules.DecideReselect:
		return c.reselectDecision(d)
	}
	return fmt.Errorf("%s: %w", d.Kind, errNotDNS)
}

func (c *ruleConn) Collect(rules.Side, int, int) error {
	return fmt.Errorf("TCP::collect: %w", errNotDNS)
}
func (c *ruleConn) Release(rules.Side, int) error { return fmt.Errorf("TCP::release: %w", errNotDNS) }
func (c *ruleConn) Payload(rules.Side) []byte     { return nil }
func (c *ruleConn) ReplacePayload(rules.Side, int, int, []byte) error {
	return fmt.Errorf("TCP::payload: %w", errNotDNS)
}
func (c *ruleConn) Respond(rules.Side, []byte) error {
	return fmt.Errorf("TCP::respond: %w", errNotDNS)
}
func (c *ruleConn) Close(rules.Side) error { return fmt.Errorf("TCP::close: %w", errNotDNS) }
func (c *ruleConn) Notify(rules.Side, rules.NotifyKind) error {
	return fmt.Errorf("TCP::notify: %w", errNotDNS)
}
func (c *ruleConn) LBSelect() (string, netip.AddrPort, error) {
	return "", netip.AddrPort{}, fmt.Errorf("LB::select: %w", errNotDNS)
}

// LBServer is the member load balancing chose, in a wide IP's
// LB_SELECTED: the pool and the virtual server's address and port (a
// fallback-ip has port 0; a name pool's member has no address, and
// LBServerName reports it).
func (c *ruleConn) LBServer() (string, netip.AddrPort, bool) {
	d := &c.lb
	if !c.hasLB || d.out != outAnswer || d.pool == nil {
		return "", netip.AddrPort{}, false
	}
	switch {
	case d.member != nil:
		return d.pool.full, d.member.vs.cfg.Destination, true
	case len(d.targets) > 0:
		return d.pool.full, netip.AddrPortFrom(netip.Addr{}, d.targets[0].cfg.Port), true
	}
	return d.pool.full, netip.AddrPortFrom(d.addrs()[0], 0), true
}

// LBServerName names the chosen member as gtm pools list them: the
// virtual server as server:vs, or a name pool's domain name (target).
func (c *ruleConn) LBServerName() (string, bool) {
	d := &c.lb
	if !c.hasLB || d.out != outAnswer || d.pool == nil {
		return "", false
	}
	switch {
	case d.member != nil:
		return d.member.name, false
	case len(d.targets) > 0:
		return strings.TrimSuffix(d.targets[0].target, "."), true
	}
	return d.addrs()[0].String(), false
}
func (c *ruleConn) MemberStatus(pool string, member netip.AddrPort) (string, error) {
	pl, t := c.addrPool(pool)
	if pl == nil {
		return "", fmt.Errorf("LB::status: no such gtm pool %s %s", t, fullPath(pool))
	}
	for _, m := range pl.members {
		if m.vs.cfg.Destination == member || (member.Port() == 0 && m.vs.addr == member.Addr()) {
			if ok, _ := memberState(m); ok {
				return "up", nil
			}
			return "down", nil
		}
	}
	return "", fmt.Errorf("LB::status: %s is not a member of gtm pool %s %s", member, t, pl.name)
}

// addrPool is the pool a rule's active_members or LB::status names: of
// the wide IP's type in an AAAA wide IP's rule, else an A pool.
func (c *ruleConn) addrPool(name string) (*pool, string) {
	t := TypeA
	if c.wide && c.wideType == TypeAAAA {
		t = TypeAAAA
	}
	return c.p.pools[Key(t, fullPath(name))], strings.ToLower(string(t))
}

// ActiveMembers lists the available members of a gtm pool (their
// virtual servers' addresses).
func (c *ruleConn) ActiveMembers(pool string) ([]netip.AddrPort, error) {
	pl, t := c.addrPool(pool)
	if pl == nil {
		return nil, fmt.Errorf("active_members: no such gtm pool %s %s", t, fullPath(pool))
	}
	var out []netip.AddrPort
	for _, m := range pl.members {
		if ok, _ := memberState(m); ok {
			out = append(out, m.vs.cfg.Destination)
		}
	}
	return out, nil
}

// DNSExpressQuery answers DNS::query from DNS Express's zones, then the
// plan's static zones, as a query for the name would be answered
// (delegations as referrals, negative answers with the SOA); wide IPs
// are not looked at, as DNS Express holds zones only.
func (c *ruleConn) DNSExpressQuery(name string, qtype uint16) (*dns.Msg, bool) {
	qname := strings.ToLower(name)
	if x := c.s.express.Load(); x != nil {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), qtype)
		if m := x.x.Answer(q, strings.ToLower(q.Question[0].Name)); m != nil {
			return m, true
		}
	}
	z := c.p.zoneFor(qname)
	if z == nil {
		return nil, false
	}
	m := new(dns.Msg)
	z.Answer(m, qname, name, qtype)
	return m, true
}

func (c *ruleConn) DNSQuery() *dns.Msg    { return c.q }
func (c *ruleConn) DNSResponse() *dns.Msg { return c.resp }
func (c *ruleConn) DNSLen() int {
	if c.qlen > 0 {
		return c.qlen
	}
	return c.q.Len()
}

func (c *ruleConn) DNSDo(a rules.DNSAction) error {
	switch a.Kind {
	case rules.DNSReturn:
		c.ret = true
	case rules.DNSDrop:
		c.drop = true
	case rules.DNSDisable, rules.DNSEnable, rules.DNSLastAct:
		return c.service(a)
	case rules.DNSCNAME, rules.DNSHost:
		if !c.wide {
			return errors.New("cname and host choose a wide IP's answer: they are valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED")
		}
		if a.Kind == rules.DNSHost && c.wideType.named() {
			// host answers an address record, which a CNAME, MX, SRV or
			// NAPTR question does not take: BIG-IP's host is for A and
			// AAAA wide IPs.
			t := strings.ToLower(string(c.wideType))
			return fmt.Errorf("host %s: a gtm wideip %s answers names, not addresses (use cname, or pool with a gtm pool %s)", a.Addr, t, t)
		}
		c.choose()
		if a.Kind == rules.DNSCNAME {
			c.cname = a.Name
		} else {
			c.host = a.Addr
		}
	}
	return nil
}

// reselectDecision takes LB::reselect in a wide IP's LB_FAILED:
// plain, the pools load balancing tried last (the wide IP's, or the pool
// a rule chose); `pool NAME`, that gtm pool of the wide IP's type;
// `pool NAME member ADDR PORT`, that member of it (address wide IPs);
// `node ADDR`, that address, as host does.
func (c *ruleConn) reselectDecision(d rules.Decision) error {
	if !c.wide || c.event != rules.LBFailed {
		return errors.New("LB::reselect: valid in a wide IP's LB_FAILED")
	}
	typ := c.wideType
	if typ == "" {
		typ = TypeA
	}
	t := strings.ToLower(string(typ))
	if d.Pool == "" && d.Addr.IsValid() { // node
		if typ.named() {
			return fmt.Errorf("LB::reselect node %s: a gtm wideip %s answers names, not addresses", d.Addr.Addr(), t)
		}
		c.choose()
		c.host = d.Addr.Addr()
		return nil
	}
	var key string
	var mem *member
	if d.Pool != "" {
		name := fullPath(d.Pool)
		key = Key(typ, name)
		pl := c.p.pools[key]
		if pl == nil {
			return fmt.Errorf("LB::reselect pool %s: no such gtm pool %s", name, t)
		}
		if d.Addr.IsValid() {
			if typ.named() {
				return fmt.Errorf("LB::reselect pool %s member %s: a gtm pool %s has names as members, not addresses", name, d.Addr, t)
			}
			for _, m := range pl.members {
				if m.vs.cfg.Destination == d.Addr || (d.Addr.Port() == 0 && m.vs.addr == d.Addr.Addr()) {
					mem = m
					break
				}
			}
			if mem == nil {
				return fmt.Errorf("LB::reselect pool %s member %s: not a member of gtm pool %s %s", name, d.Addr, t, name)
			}
		}
	}
	c.choose()
	c.reselect, c.reselPool, c.reselMember = true, key, mem
	return nil
}

// runRules runs one event of a program in the query's rule state for
// it; a Tcl error drops the query, as BIG-IP drops the packet of a
// failing rule.
func (s *Server) runRules(c *rules.Program, rc *ruleConn, ev rules.Event) {
	if err := rc.state(c).Run(ev); err != nil {
		rc.drop = true // logged by the rules engine
	}
}

// answerRules is Answer with the rules of the listener the query came in on.
func (s *Server) answerRules(r *dns.Msg, src netip.Addr, udp bool, v via) (*dns.Msg, bool) {
	if r.Opcode == dns.OpcodeNotify && !r.Response {
		if m, ok := s.expressNotify(v.wire, r, src); ok {
			return m, m != nil
		}
	}
	p := s.plan.Load()
	if !p.anyRules {
		return s.answerCore(p, r, src, udp, nil, v.l, v.port, v.key.addr)
	}
	rc := &ruleConn{s: s, p: p, q: r, src: src, local: v.key.addr, tcp: !udp, qlen: v.qlen}
	if v.l != nil && v.l.Log != nil {
		if ml, ok := v.l.Log.(MessageLog); ok {
			rc.log = ml.Message
		}
	}
	defer rc.release()
	lp := p.listenRules[v.key]
	if lp != nil && lp.Handles(rules.DNSRequest) && !r.Response && r.Opcode == dns.OpcodeQuery && len(r.Question) == 1 {
		m := new(dns.Msg)
		m.SetReply(r)
		rc.resp = m
		s.runRules(lp, rc, rules.DNSRequest)
		switch {
		case rc.drop:
			s.stats.queries.Inc(0)
			s.stats.dropped.Inc(0)
			return nil, false
		case rc.ret:
			s.stats.queries.Inc(0)
			rc.origin = OriginTCL
			return s.response(lp, rc, s.finishMsg(m, r.IsEdns0(), nil, udp))
		}
	}
	l := v.l
	if rc.svc.Off&(ServiceGTM|ServiceDNSX) != 0 {
		// DNS::disable gtm|dnsx: this query's own copy of the
		// listener's settings, so that only it skips them.
		var x Listener
		if l != nil {
			x = *l
		}
		x.NoGTM = x.NoGTM || rc.svc.Off&ServiceGTM != 0
		x.NoExpress = x.NoExpress || rc.svc.Off&ServiceDNSX != 0
		l = &x
	}
	m, send := s.answerCore(p, r, src, udp, rc, l, v.port, v.key.addr)
	if send && rc.w != nil && rc.w.rules.Handles(rules.DNSResponse) {
		rc.resp, rc.ret = m, false
		s.runRules(rc.w.rules, rc, rules.DNSResponse)
		if rc.drop {
			s.stats.dropped.Inc(0)
			return nil, false
		}
	}
	if !send || lp == nil {
		return m, send
	}
	return s.response(lp, rc, m)
}

// response runs the listener's DNS_RESPONSE on the answer about to go.
func (s *Server) response(lp *rules.Program, rc *ruleConn, m *dns.Msg) (*dns.Msg, bool) {
	if !lp.Handles(rules.DNSResponse) {
		return m, true
	}
	rc.resp, rc.ret = m, false
	s.runRules(lp, rc, rules.DNSResponse)
	if rc.drop {
		s.stats.dropped.Inc(0)
		return nil, false
	}
	return m, true
}

// wideIPRules decides a wide IP's query with its rules: DNS_REQUEST
// before load balancing, then LB_SELECTED when load balancing chose an
// answer or LB_FAILED when it did not (return to DNS, drop-packet), as
// BIG-IP DNS runs them (its DNS_RESPONSE runs in answer, once the
// response is built). A rule's host answers at once (no load
// balancing, no LB event); its pool is load balanced instead of the wide
// IP's pools, and the LB event follows. done says the response is
// decided (m, send: DNS::return, DNS::drop, cname); else d is the
// outcome for the caller to count and answer.
func (s *Server) wideIPRules(rc *ruleConn, rq *request, w *wideIP, m *dns.Msg, qname string, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, d *decision) (_ *dns.Msg, send, done bool) {
	m, send, done = s.wideIPEvents(rc, rq, w, m, q, opt, ecs, udp, d)
	if !done {
		rc.answerTTL(d)
	}
	return m, send, done
}

// wideIPEvents runs the wide IP's events for wideIPRules.
func (s *Server) wideIPEvents(rc *ruleConn, rq *request, w *wideIP, m *dns.Msg, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, d *decision) (_ *dns.Msg, send, done bool) {
	rc.w = w
	rc.at = queryAt{client: rq.client, topoAddr: rq.topoAddr, ecs: rq.ecs, now: rq.now}
	var last *pool // the pool a rule chose, nil for the wide IP's pools
	if w.rules.Handles(rules.DNSRequest) {
		s.wideIPEvent(rc, w, m, rules.DNSRequest, nil)
		rq.prio, rq.qosw, rq.persist = rc.prio, rc.qosw, rc.persist
		if m, send, done := s.ruleEnds(rc, w, m, q, opt, ecs, udp, d); done {
			return m, send, true
		}
		switch {
		case rc.host.IsValid():
			s.hostAnswer(rc, w, d, 0)
			return nil, false, false
		case rc.pool != "":
			last = rq.plan.pools[rc.pool]
		}
	}
	if last != nil {
		s.resolveIn(rq, w, last, d)
	} else {
		s.resolve(rq, w, d)
	}
	for tries := 0; ; tries++ {
		ev := rules.LBSelected
		if d.out != outAnswer {
			ev = rules.LBFailed
		}
		if !w.rules.Handles(ev) {
			return nil, false, false
		}
		s.wideIPEvent(rc, w, m, ev, d)
		rq.qosw, rq.persist = rc.qosw, rc.persist // for the pool or LB::reselect it chose
		if m, send, done := s.ruleEnds(rc, w, m, q, opt, ecs, udp, d); done {
			return m, send, true
		}
		switch {
		case rc.host.IsValid():
			s.hostAnswer(rc, w, d, d.ttl)
		case rc.pool != "":
			*d = decision{}
			s.resolveIn(rq, w, rq.plan.pools[rc.pool], d)
		case rc.reselect && tries < maxReselects:
			// LB::reselect: load balance again, and the LB event runs
			// on what that gives, as BIG-IP runs LB_SELECTED or
			// LB_FAILED again after a reselect.
			if rc.reselPool != "" {
				last = rq.plan.pools[rc.reselPool]
			}
			*d = decision{}
			switch {
			case rc.reselMember != nil:
				s.memberAnswer(rq, w, last, rc.reselMember, d)
			case last != nil:
				s.resolveIn(rq, w, last, d)
			default:
				s.resolve(rq, w, d)
			}
			continue
		}
		return nil, false, false
	}
}

// memberAnswer answers one member of a pool an LB::reselect named, if it
// is available; else the query returns to DNS.
func (s *Server) memberAnswer(rq *request, w *wideIP, pl *pool, m *member, d *decision) {
	if ok, _ := memberState(m); !ok {
		d.out = outReturnToDNS
		return
	}
	*d = decision{out: outAnswer, ttl: pl.ttl, pool: pl, member: m}
	d.setAddr(m.vs.addr)
	s.finish(rq, w, d)
}

// wideIPEvent runs one event of a wide IP's rules, with d the load
// balancing decision LB::server reads (nil before load balancing).
func (s *Server) wideIPEvent(rc *ruleConn, w *wideIP, m *dns.Msg, ev rules.Event, d *decision) {
	rc.resp, rc.wide, rc.wideType, rc.hasLB, rc.event = m, true, w.typ, d != nil, ev
	if d != nil {
		rc.lb = *d
	}
	rc.drop, rc.ret = false, false
	rc.choose()
	s.runRules(w.rules, rc, ev)
	rc.wide, rc.wideType, rc.hasLB, rc.lb, rc.event = false, "", false, decision{}, 0
}

// ruleEnds carries out the choices of a wide IP's rule that end the
// query, counted as the query ended: DNS::drop (dropped), cname
// (resolved) and DNS::return (neither: the rule answered).
func (s *Server) ruleEnds(rc *ruleConn, w *wideIP, m *dns.Msg, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, d *decision) (_ *dns.Msg, send, done bool) {
	switch {
	case rc.drop:
		s.stats.dropped.Inc(0)
		w.rt.dropped.Inc(0)
		return nil, false, true
	case rc.ret:
		rc.origin = OriginTCL
		return s.finishMsg(m, opt, ecs, udp), true, true
	case rc.cname != "":
		ttl := w.ttl()
		if d != nil && d.out == outAnswer && d.ttl > 0 {
			ttl = d.ttl
		}
		if rc.ttlSet {
			ttl = rc.ttl
		}
		m.Authoritative = true
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: ttl}, Target: rc.cname})
		w.rt.resolved.Inc(0)
		return s.finishMsg(m, opt, ecs, udp), true, true
	}
	return nil, false, false
}

// hostAnswer makes d the rule's host address, with the TTL of the
// decision it replaces when there was one, else the wide IP's first
// pool's.
func (s *Server) hostAnswer(rc *ruleConn, w *wideIP, d *decision, ttl uint32) {
	if ttl == 0 || d.out != outAnswer {
		ttl = w.ttl()
	}
	*d = decision{out: outAnswer, ttl: ttl}
	d.setAddr(rc.host)
}

// ttl is the TTL of answers a wide IP's rule makes without a pool: its
// first pool's.
func (w *wideIP) ttl() uint32 {
	if len(w.pools) > 0 {
		return w.pools[0].pool.ttl
	}
	return 30
}
