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
	// What the rules did.
	drop, ret bool
	pool      string
	cname     string
	host      netip.Addr
}

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
		c.pool, c.cname, c.host = Key(typ, name), "", netip.Addr{}
		return nil
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
		c.pool, c.cname, c.host = "", "", netip.Addr{}
		if a.Kind == rules.DNSCNAME {
			c.cname = a.Name
		} else {
			c.host = a.Addr
		}
	}
	return nil
}

// runRules runs one event of a program; a Tcl error drops the query, as
// BIG-IP drops the packet of a failing rule.
func (s *Server) runRules(c *rules.Program, rc *ruleConn, ev rules.Event) {
	sess := c.NewConnState(rc)
	err := sess.Run(ev)
	sess.Release()
	if err != nil {
		rc.drop = true // logged by the rules engine
	}
}

// answer is Answer with the rules of the listener the query came in on.
func (s *Server) answer(r *dns.Msg, src netip.Addr, udp bool, v via) (*dns.Msg, bool) {
	p := s.plan.Load()
	if !p.anyRules {
		return s.answerCore(p, r, src, udp, nil)
	}
	rc := &ruleConn{s: s, p: p, q: r, src: src, local: v.key.addr, tcp: !udp, qlen: v.qlen}
	lp := p.listenRules[v.key]
	if lp != nil && lp.Handles(rules.DNSRequest) && !r.Response && r.Opcode == dns.OpcodeQuery && len(r.Question) == 1 {
		m := new(dns.Msg)
		m.SetReply(r)
		rc.resp = m
		s.runRules(lp, rc, rules.DNSRequest)
		switch {
		case rc.drop:
			s.stats.queries.Add(1)
			s.stats.dropped.Add(1)
			return nil, false
		case rc.ret:
			s.stats.queries.Add(1)
			return s.response(lp, rc, s.finishMsg(m, r.IsEdns0(), nil, udp))
		}
	}
	m, send := s.answerCore(p, r, src, udp, rc)
	if send && rc.w != nil && rc.w.rules.Handles(rules.DNSResponse) {
		rc.resp, rc.ret = m, false
		s.runRules(rc.w.rules, rc, rules.DNSResponse)
		if rc.drop {
			s.stats.dropped.Add(1)
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
		s.stats.dropped.Add(1)
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
	rc.w = w
	chosen := false
	if w.rules.Handles(rules.DNSRequest) {
		s.wideIPEvent(rc, w, m, rules.DNSRequest, nil)
		if m, send, done := s.ruleEnds(rc, w, m, q, opt, ecs, udp, d); done {
			return m, send, true
		}
		switch {
		case rc.host.IsValid():
			s.hostAnswer(rc, w, d, 0)
			return nil, false, false
		case rc.pool != "":
			s.resolveIn(rq, w, rq.plan.pools[rc.pool], d)
			chosen = true
		}
	}
	if !chosen {
		s.resolve(rq, w, d)
	}
	ev := rules.LBSelected
	if d.out != outAnswer {
		ev = rules.LBFailed
	}
	if !w.rules.Handles(ev) {
		return nil, false, false
	}
	s.wideIPEvent(rc, w, m, ev, d)
	if m, send, done := s.ruleEnds(rc, w, m, q, opt, ecs, udp, d); done {
		return m, send, true
	}
	switch {
	case rc.host.IsValid():
		s.hostAnswer(rc, w, d, d.ttl)
	case rc.pool != "":
		*d = decision{}
		s.resolveIn(rq, w, rq.plan.pools[rc.pool], d)
	}
	return nil, false, false
}

// wideIPEvent runs one event of a wide IP's rules, with d the load
// balancing decision LB::server reads (nil before load balancing).
func (s *Server) wideIPEvent(rc *ruleConn, w *wideIP, m *dns.Msg, ev rules.Event, d *decision) {
	rc.resp, rc.wide, rc.wideType, rc.hasLB = m, true, w.typ, d != nil
	if d != nil {
		rc.lb = *d
	}
	rc.drop, rc.ret, rc.pool, rc.cname, rc.host = false, false, "", "", netip.Addr{}
	s.runRules(w.rules, rc, ev)
	rc.wide, rc.wideType, rc.hasLB, rc.lb = false, "", false, decision{}
}

// ruleEnds carries out the choices of a wide IP's rule that end the
// query, counted as the query ended: DNS::drop (dropped), cname
// (resolved) and DNS::return (neither: the rule answered).
func (s *Server) ruleEnds(rc *ruleConn, w *wideIP, m *dns.Msg, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, d *decision) (_ *dns.Msg, send, done bool) {
	switch {
	case rc.drop:
		s.stats.dropped.Add(1)
		w.rt.dropped.Add(1)
		return nil, false, true
	case rc.ret:
		return s.finishMsg(m, opt, ecs, udp), true, true
	case rc.cname != "":
		ttl := w.ttl()
		if d != nil && d.out == outAnswer && d.ttl > 0 {
			ttl = d.ttl
		}
		m.Authoritative = true
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: ttl}, Target: rc.cname})
		w.rt.resolved.Add(1)
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
