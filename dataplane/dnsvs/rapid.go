package dnsvs

import (
	"strings"

	"github.com/miekg/dns"
)

// rapid is enable-rapid-response on a UDP query r: DNS Express's zones
// answer it before the logging, the iRules and the profile's steps, as
// BIG-IP's Rapid Response answers at line rate [M: what it skips on
// BIG-IP is not documented]; a query they do not answer gets
// rapid-response-last-action. done is false when the query goes on
// through the usual path (last action allow, or not a plain query: a
// response, a NOTIFY, a query without exactly one question or of
// another class [M]); m is nil when nothing is sent.
func (s *Service) rapid(r *dns.Msg) (m *dns.Msg, done bool) {
	if r.Response || r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 || r.Question[0].Qclass != dns.ClassINET {
		return nil, false
	}
	q := r.Question[0]
	if q.Qtype != dns.TypeAXFR && q.Qtype != dns.TypeIXFR {
		if x := s.e.x.Load(); x != nil {
			if m := x.x.Answer(r, strings.ToLower(q.Name)); m != nil {
				s.st.RapidAnswers.Add(1)
				if o := r.IsEdns0(); o != nil && m.IsEdns0() == nil {
					m.SetEdns0(o.UDPSize(), false) // unsigned [M]
				}
				return m, true
			}
		}
	}
	switch s.p.RapidLast {
	case "allow":
		s.st.RapidAllow.Add(1)
		return nil, false
	case "noerror":
		s.st.RapidNoError.Add(1)
		return reply(r, dns.RcodeSuccess), true
	case "nxdomain":
		s.st.RapidNXDomain.Add(1)
		return reply(r, dns.RcodeNameError), true
	case "refuse":
		s.st.RapidRefuse.Add(1)
		return reply(r, dns.RcodeRefused), true
	case "truncate": // the client asks again over TCP, which takes the usual path
		s.st.RapidTruncate.Add(1)
		m := reply(r, dns.RcodeSuccess)
		m.Truncated = true
		return m, true
	}
	s.st.RapidDrop.Add(1)
	return nil, true
}
