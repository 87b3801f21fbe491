package gslb

import (
	"net/netip"

	"github.com/miekg/dns"
)

// Express is DNS Express (dataplane/dnsexpress) as the GSLB asks it: its
// zones answer a name no wide IP answers, before the static zones
// (BIG-IP's order: wide IPs, DNS Express, then the cache and BIND), and
// it takes the NOTIFYs that come to a listener.
type Express interface {
	// Answer is the reply to r (its one question's name lower cased as
	// qname) from the zone holding the name; nil when none does.
	Answer(r *dns.Msg, qname string) *dns.Msg
	// Notify answers a NOTIFY; pass says it is for a next step too.
	Notify(wire []byte, r *dns.Msg, src netip.Addr) (m *dns.Msg, pass bool)
}

type expressRef struct{ x Express }

// SetExpress lets x answer its zones on every listener and dns-profile
// virtual (AnswerVirtual); nil takes it away.
func (s *Server) SetExpress(x Express) {
	if x == nil {
		s.express.Store(nil)
		return
	}
	s.express.Store(&expressRef{x})
}

// expressAnswer is the DNS Express step: one atomic load when no store
// is set.
func (s *Server) expressAnswer(r *dns.Msg, qname string) *dns.Msg {
	x := s.express.Load()
	if x == nil {
		return nil
	}
	m := x.x.Answer(r, qname)
	if m == nil {
		return nil
	}
	s.stats.static.Inc(0)
	if m.Rcode == dns.RcodeNameError {
		s.stats.nxdomain.Inc(0)
	}
	return m
}

// expressNotify answers a NOTIFY through DNS Express; ok is false when no
// store is set (the listener then answers NOTIMP as before).
func (s *Server) expressNotify(wire []byte, r *dns.Msg, src netip.Addr) (m *dns.Msg, ok bool) {
	x := s.express.Load()
	if x == nil {
		return nil, false
	}
	s.stats.queries.Inc(0)
	m, _ = x.x.Notify(wire, r, src) // a listener has no pool to pass it to [M]
	return m, true
}
