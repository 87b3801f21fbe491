package dnsvs

import (
	"net"
	"net/netip"
	"strings"

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
func (s *Service) dns64(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool, ifx int, c *Cache, w *waitingQuery) (_ *dns.Msg, own bool) {
	if s.p.DNS64 == "secondary" {
		m, own := s.ask(vs, snap, r, wire, client, local, udp, ifx, c, w)
		if m == nil || m.Rcode != dns.RcodeSuccess || hasType(m.Answer, dns.TypeAAAA) {
			return m, own
		}
	}
	a := r.Copy()
	a.Question[0].Qtype = dns.TypeA
	aw, err := a.Pack()
	if err != nil {
		return nil, false
	}
	am, own := s.ask(vs, snap, a, aw, client, local, udp, ifx, c, w)
	if am == nil {
		return nil, false
	}
	prefix := s.dns64Prefix()
	m := am.Copy()
	m.Question = r.Question
	m.Answer = m.Answer[:0]
	for _, rr := range am.Answer {
		switch x := rr.(type) {
		case *dns.A:
			m.Answer = append(m.Answer, synthesize(prefix, x))
			s.st.DNS64.Add(1)
		case *dns.CNAME:
			m.Answer = append(m.Answer, x)
		}
	}
	return m, own
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

// rewriteAdditional applies dns64-additional-section-rewrite to the
// additional section of m, so that the glue of an NS or MX answer is
// reachable by the clients the profile serves: v6-only replaces each A
// record by an AAAA record synthesized within prefix (none for a name
// that has AAAA records of its own there), v4-only drops the AAAA
// records, any keeps the A records and adds the synthesized AAAA records
// beside them [M: BIG-IP's exact rules are not documented].
func rewriteAdditional(mode string, prefix netip.Addr, m *dns.Msg) {
	if len(m.Extra) == 0 {
		return
	}
	var has6 map[string]bool
	for _, rr := range m.Extra {
		if rr.Header().Rrtype == dns.TypeAAAA {
			if has6 == nil {
				has6 = map[string]bool{}
			}
			has6[strings.ToLower(rr.Header().Name)] = true
		}
	}
	extra := make([]dns.RR, 0, len(m.Extra)+1)
	for _, rr := range m.Extra {
		switch x := rr.(type) {
		case *dns.A:
			if mode != "v6-only" {
				extra = append(extra, x)
			}
			if mode != "v4-only" && !has6[strings.ToLower(x.Hdr.Name)] {
				extra = append(extra, synthesize(prefix, x))
			}
		case *dns.AAAA:
			if mode != "v4-only" {
				extra = append(extra, x)
			}
		default:
			extra = append(extra, rr)
		}
	}
	m.Extra = extra
}

// dns64Prefix is the profile's dns64-prefix, the well-known prefix for
// any6.
func (s *Service) dns64Prefix() netip.Addr {
	if p := s.p.DNS64Prefix; p.Is6() && !p.IsUnspecified() {
		return p
	}
	return WellKnownPrefix
}
