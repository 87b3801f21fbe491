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
// connection's copies (DoHCopies; nil: none). ifx is the client
// connection's arrival interface (0: not known), which the member
// query's SNAT choice takes as a TCP client's (state.SNATSourceHeldOn).
func (s *Service) AnswerDoH(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, ifx int, cp *DoHCopies) (*dns.Msg, bool) {
	if s.log != nil {
		s.log.query(r, client, local)
	}
	var qc *queryClone
	if cp != nil {
		qc = cp.q
	}
	m, send := s.answerStream(vs, snap, r, wire, client, local, true, ifx, qc)
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

// ProxyCopies starts the copies of a client connection of a doh-proxy
// virtual without a dns profile, which passes each query to a member
// itself (dataplane/doh): its clone pools get the queries as a DoH
// virtual with a dns profile copies them (DoHCopies, DNS over TCP on one
// clone connection per client connection and pool). No rule runs on
// such a virtual (the commit warns of its rules' events), so only the
// clone pools copy. nil (a nil test per query) when the virtual has no
// clone pools, or none gave a member (counted as dropped).
func ProxyCopies(vs *state.Virtual, snap *state.VirtualSnap) *DoHCopies {
	if snap.Clone == nil {
		return nil
	}
	f := snap.Clone.Start()
	if f == nil {
		return nil
	}
	return &DoHCopies{q: &queryClone{vs: vs, snap: snap, f: f, tcp: true}}
}

// Copy copies one query of a doh-proxy without a dns profile
// (ProxyCopies): received as the client sent it to the clientside pools,
// sent as the member gets it to the serverside ones, each with its
// length prefix; it returns at once, the copy never holding the query
// up.
func (c *DoHCopies) Copy(received, sent []byte) {
	if c != nil {
		c.q.stream(received, sent)
	}
}
