package dnsvs

import (
	"net"
	"net/netip"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// WellKnownPrefix is RFC 6052's 64:ff9b::/96, the dns64-prefix when the
// profile leaves it any6 [M].
var WellKnownPrefix = netip.MustParseAddr("64:ff9b::")

// dns64 answers an AAAA query as RFC 6147 does: secondary asks the pool
// for AAAA and, when the name has none (NOERROR without an AAAA answer),
// for A, and synthesizes an AAAA record from each A record within the
// /96 prefix; immediate and v4-only ask for A at once [M: v4-only as
// immediate]. forward keeps the answer in the cache under the AAAA
// question.
func (s *Service) dns64(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool) *dns.Msg {
	if s.p.DNS64 == "secondary" {
		m := s.ask(vs, snap, r, wire, client, local, udp)
		if m == nil || m.Rcode != dns.RcodeSuccess || hasType(m.Answer, dns.TypeAAAA) {
			return m
		}
	}
	a := r.Copy()
	a.Question[0].Qtype = dns.TypeA
	aw, err := a.Pack()
	if err != nil {
		return nil
	}
	am := s.ask(vs, snap, a, aw, client, local, udp)
	if am == nil {
		return nil
	}
	prefix := s.p.DNS64Prefix
	if !prefix.Is6() || prefix.IsUnspecified() {
		prefix = WellKnownPrefix
	}
	m := am.Copy()
	m.Question = r.Question
	m.Answer = m.Answer[:0]
	for _, rr := range am.Answer {
		switch x := rr.(type) {
		case *dns.A:
			m.Answer = append(m.Answer, synthesize(prefix, x))
		case *dns.CNAME:
			m.Answer = append(m.Answer, x)
		}
	}
	return m
}

// synthesize is the AAAA record of a within prefix's first 96 bits.
func synthesize(prefix netip.Addr, a *dns.A) *dns.AAAA {
	b := prefix.As16()
	copy(b[12:], a.A.To4())
	h := a.Hdr
	h.Rrtype = dns.TypeAAAA
	return &dns.AAAA{Hdr: h, AAAA: net.IP(b[:])}
}

func hasType(rrs []dns.RR, t uint16) bool {
	for _, rr := range rrs {
		if rr.Header().Rrtype == t {
			return true
		}
	}
	return false
}
