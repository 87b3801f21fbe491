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
// nothing goes back (a drop, no member answered). cp is the client
// connection's copies (DoHCopies; nil: none).
func (s *Service) AnswerDoH(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, cp *DoHCopies) (*dns.Msg, bool) {
	if s.log != nil {
		s.log.query(r, client, local)
	}
	var qc *queryClone
	if cp != nil {
		qc = cp.q
	}
	m, send := s.answerStream(vs, snap, r, wire, client, local, true, qc)
	if send && m != nil && s.log != nil {
		s.log.response(m, client)
	}
	return m, send && m != nil
}

// DoHCopies is one DNS over HTTPS client connection's copies of its
// queries, to the virtual's clone pools and a rule's clone (clone.go):
// each query, taken out of its GET or POST, goes on the connection's
// clone connection of each pool with its length prefix, as a dns
// virtual's TCP queries do, so that a clone member (an IDS, a shadow
// DNS server) reads DNS over TCP; clientside as the client sent it,
// serverside as DNS_REQUEST left it [M: F5 documents no clone of DoH;
// BIG-IP's clientside copy of a client-ssl connection would be its TLS
// records, the HTTP around the query is not copied]. An HTTP/2 client's
// queries run at once, so the copies take a lock (queryClone.mu).
type DoHCopies struct{ q *queryClone }

// DoHCopies starts the copies of a DoH client connection; nil (a nil
// test per query) when the virtual has neither clone pools nor a rule
// that clones.
func (s *Service) DoHCopies(vs *state.Virtual, snap *state.VirtualSnap) *DoHCopies {
	if snap.Clone == nil && snap.Cfg.Rules == nil {
		return nil
	}
	q := s.newTCPClone(vs, snap)
	if q == nil {
		return nil
	}
	return &DoHCopies{q: q}
}

// Close ends the connection's clone connections once they wrote what
// they hold.
func (c *DoHCopies) Close() {
	if c != nil {
		c.q.close()
	}
}
