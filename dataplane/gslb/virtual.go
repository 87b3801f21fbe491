package gslb

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/rules"
)

// AnswerVirtual answers r for an LTM virtual with a dns profile
// (dataplane/dnsvs): as a listener does when gtm lets a wide IP of the
// name answer (the wide IP's rules run; the listener's do not, the
// virtual is no gtm listener), and from DNS Express's zones and then the
// static zones when express lets them and no wide IP answered (BIG-IP's
// order: wide IPs, DNS Express, the cache). handled is
// false when neither holds the name, so that the profile's next step
// (its cache, unhandled-query-action) decides; a malformed query is
// never handled here. dnssec (the profile's enable-dnssec) lets the
// answer of a name under an `ltm dns dnssec zone` be signed.
// origin names what answered (OriginGTM for a wide IP, OriginDNSX for
// a zone), for DNS::origin.
func (s *Server) AnswerVirtual(r *dns.Msg, src netip.Addr, udp, gtm, express, dnssec bool) (m *dns.Msg, send, handled bool, origin string) {
	if r.Response || r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 {
		return nil, false, false, ""
	}
	q := r.Question[0]
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		return nil, false, false, ""
	}
	p := s.plan.Load()
	qname := strings.ToLower(q.Name)
	if gtm {
		if _, some := p.wideIPFor(qname, q.Qtype); some != nil {
			m, send = s.answerRules(r, src, udp, via{})
			if send && m != nil && dnssec && p.signer != nil {
				s.sign(p, r, m, udp)
			}
			return m, send, true, OriginGTM
		}
	}
	if !express {
		return nil, false, false, ""
	}
	if m = s.expressAnswer(r, qname); m != nil {
		s.stats.queries.Inc(0)
		return s.finishMsg(m, r.IsEdns0(), nil, udp), true, true, OriginDNSX
	}
	z := p.zoneFor(qname)
	if z == nil {
		return nil, false, false, ""
	}
	s.stats.queries.Inc(0)
	s.stats.static.Inc(0)
	m = new(dns.Msg)
	m.SetReply(r)
	z.Answer(m, qname, q.Name, q.Qtype)
	if m.Rcode == dns.RcodeNameError {
		s.stats.nxdomain.Inc(0)
	}
	m = s.finishMsg(m, r.IsEdns0(), nil, udp)
	if dnssec && p.signer != nil {
		s.sign(p, r, m, udp)
	}
	return m, true, true, OriginDNSX
}

// VirtualRules is one query's run of an LTM virtual's iRules: the
// DNS_REQUEST that ran on it, and the session its DNS_RESPONSE runs in,
// so that a variable set in one is there in the other.
type VirtualRules struct {
	s    *Server
	rc   *ruleConn
	prog *rules.Program
	udp  bool
}

// VirtualRequest runs prog's DNS_REQUEST (an LTM virtual's iRules, on a
// dns profile) on r, with the DNS:: commands a listener's rules have.
// done is true when the rule ended the query: send false for DNS::drop
// or a Tcl error, else m is the response DNS::return sends (its
// DNS_RESPONSE has run). Otherwise the profile answers r (which the
// rule may have edited) and hands the answer to vr.Response. vr is nil
// when prog handles neither event; Release ends it. log is the dns
// profile's logging profile, DNS::log's (nil: none); clone takes the
// rule's clone command (the virtual's copy of the query,
// dataplane/dnsvs; nil: the command is skipped).
func (s *Server) VirtualRequest(prog *rules.Program, r *dns.Msg, src netip.Addr, local netip.AddrPort, udp bool, log func(id uint16, msg string), clone rules.Cloner) (vr *VirtualRules, m *dns.Msg, send, done bool) {
	if prog == nil || !prog.Handles(rules.DNSRequest) && !prog.Handles(rules.DNSResponse) {
		return nil, nil, false, false
	}
	vr = &VirtualRules{s: s, prog: prog, udp: udp,
		rc: &ruleConn{s: s, p: s.plan.Load(), q: r, src: src, local: local, tcp: !udp, virtual: true, log: log, clone: clone}}
	if !prog.Handles(rules.DNSRequest) {
		return vr, nil, false, false
	}
	m = new(dns.Msg)
	m.SetReply(r)
	vr.rc.resp = m
	s.runRules(prog, vr.rc, rules.DNSRequest)
	switch {
	case vr.rc.drop:
		return vr, nil, false, true
	case vr.rc.ret:
		vr.rc.origin = OriginTCL
		m, send = vr.Response(s.finishMsg(m, r.IsEdns0(), nil, udp))
		return vr, m, send, true
	}
	return vr, nil, false, false
}

// Response runs the virtual's DNS_RESPONSE on m, the answer about to go;
// send is false when the rule drops it.
func (vr *VirtualRules) Response(m *dns.Msg) (*dns.Msg, bool) {
	if vr == nil || !vr.prog.Handles(rules.DNSResponse) {
		return m, true
	}
	vr.rc.resp, vr.rc.ret, vr.rc.drop = m, false, false
	vr.s.runRules(vr.prog, vr.rc, rules.DNSResponse)
	if vr.rc.drop {
		return nil, false
	}
	return vr.rc.resp, true
}

// Services is what the rule's DNS_REQUEST asked of the profile's steps
// for this query (DNS::disable, DNS::enable, DNS::last_act); the zero
// value, the profile's own, for a nil vr.
func (vr *VirtualRules) Services() Services {
	if vr == nil {
		return Services{}
	}
	return vr.rc.svc
}

// SetOrigin tells DNS::origin in DNS_RESPONSE what built the answer
// (Origin*).
func (vr *VirtualRules) SetOrigin(o string) {
	if vr != nil {
		vr.rc.origin = o
	}
}

// SetRPZ tells DNS::rpz_policy in DNS_RESPONSE the response policy the
// cache applied ("ZONE POLICY TRIGGER"; "" for none).
func (vr *VirtualRules) SetRPZ(policy string) {
	if vr != nil {
		vr.rc.rpz = policy
	}
}

// Release ends the query's rule session.
func (vr *VirtualRules) Release() {
	if vr != nil {
		vr.rc.release()
	}
}

var _ rules.Cloner = (*ruleConn)(nil)

// Clone implements rules.Cloner for an LTM virtual's rules: the virtual's
// dns profile copies the query to the clone member (dataplane/dnsvs,
// clone.go), which decides in which events it can. A gtm listener's and
// a wide IP's rules have no virtual to count or copy for: their clone is
// skipped, as it was before.
func (c *ruleConn) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	if c.clone == nil || c.wide {
		return rules.ErrCloneEvent
	}
	return c.clone.Clone(pool, member, side, ev)
}
