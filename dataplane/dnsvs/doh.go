package dnsvs

import (
	"net/netip"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// AnswerDoH answers one query that came over DNS over HTTPS to a virtual
// with a doh-server profile (dataplane/doh): what a TCP query to a
// virtual with this dns profile gets (logging, the virtual's DNS_REQUEST
// and DNS_RESPONSE, the wide IPs, DNS Express, the cache,
// unhandled-query-action), with the pool asked over UDP and again over
// TCP on a truncated answer. wire is r as received; send is false when
// nothing goes back (a drop, no member answered).
func (s *Service) AnswerDoH(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort) (*dns.Msg, bool) {
	if s.log != nil {
		s.log.query(r, client, local)
	}
	m, send := s.answerStream(vs, snap, r, wire, client, local, true, nil)
	if send && m != nil && s.log != nil {
		s.log.response(m, client)
	}
	return m, send && m != nil
}
