package gslb

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// AnswerVirtual answers r for an LTM virtual with a dns profile
// (dataplane/dnsvs): as a listener does when gtm lets a wide IP of the
// name answer (the wide IP's rules run; the listener's do not, the
// virtual is no gtm listener), and from the static zones, BIG-IP's DNS
// Express, when express lets them and no wide IP answered. handled is
// false when neither holds the name, so that the profile's next step
// (its cache, unhandled-query-action) decides; a malformed query is
// never handled here.
func (s *Server) AnswerVirtual(r *dns.Msg, src netip.Addr, udp, gtm, express bool) (m *dns.Msg, send, handled bool) {
	if r.Response || r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 {
		return nil, false, false
	}
	q := r.Question[0]
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		return nil, false, false
	}
	p := s.plan.Load()
	qname := strings.ToLower(q.Name)
	if gtm {
		if _, some := p.wideIPFor(qname, q.Qtype); some != nil {
			m, send = s.answer(r, src, udp, via{})
			return m, send, true
		}
	}
	if !express {
		return nil, false, false
	}
	z := p.zoneFor(qname)
	if z == nil {
		return nil, false, false
	}
	s.stats.queries.Inc(0)
	s.stats.static.Inc(0)
	m = new(dns.Msg)
	m.SetReply(r)
	z.answer(m, qname, q.Name, q.Qtype)
	if m.Rcode == dns.RcodeNameError {
		s.stats.nxdomain.Inc(0)
	}
	return s.finishMsg(m, r.IsEdns0(), nil, udp), true, true
}
