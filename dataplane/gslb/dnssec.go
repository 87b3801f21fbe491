package gslb

import (
	"net/netip"

	"github.com/miekg/dns"
)

// answer is every query's way in (listeners, Answer, AnswerVirtual's wide
// IPs): the answer, signed when the plan has a DNSSEC signer.
func (s *Server) answer(r *dns.Msg, src netip.Addr, udp bool, v via) (*dns.Msg, bool) {
	m, send := s.answerRules(r, src, udp, v)
	if send && m != nil {
		if p := s.plan.Load(); p.signer != nil {
			s.sign(p, r, m, udp)
		}
	}
	return m, send
}

// sign has the plan's signer complete m, the answer to r, and truncates
// it again to the requester's UDP size.
func (s *Server) sign(p *plan, r, m *dns.Msg, udp bool) {
	opt := r.IsEdns0()
	p.signer.Sign(m, opt != nil && opt.Do(), p)
	if udp {
		m.Truncate(udpSize(opt))
	}
}

// TypesAt lists the record types a name has in the plan: a static zone's
// records there (or those a wildcard gives it) and the types of the wide
// IPs of that name. The signer
// writes them in a NODATA answer's NSEC3.
func (p *plan) TypesAt(name string) []uint16 {
	var out []uint16
	if z := p.zoneFor(name); z != nil {
		set := z.Set(name)
		if set == nil {
			set = z.Wildcard(name) // answered as the name, so denied as it
		}
		for t := range set {
			out = append(out, t)
		}
	}
	for i, t := range Types {
		var w *wideIP
		if i == 0 {
			w = p.lookupName(name)
		} else {
			w = p.typed[i].lookup(name)
		}
		if w != nil {
			out = append(out, t.qtype())
		}
	}
	return out
}

// Exists says name owns records in the plan or is an empty non-terminal
// of a static zone: the signer's closest encloser of a name that does not
// exist.
func (p *plan) Exists(name string) bool {
	if z := p.zoneFor(name); z != nil && z.Exists(name) {
		return true
	}
	return len(p.TypesAt(name)) > 0
}

// RRset is a static zone's records of name and type: the DS records the
// signer adds to a referral.
func (p *plan) RRset(name string, t uint16) []dns.RR {
	if z := p.zoneFor(name); z != nil {
		return z.Set(name)[t]
	}
	return nil
}
