package dnsexpress

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Notify handles a NOTIFY (RFC 1996) for one of the store's zones,
// received as wire (the bytes its TSIG signs; nil when they are not at
// hand, which fails a TSIG check) from src. m is the answer to send; pass
// says the NOTIFY is also for the listener's next step (a dns profile's
// pool): notify-action bypass and repeat, or a zone the store does not
// hold. m is nil when nothing is to be sent.
//
// A zone takes NOTIFYs from its dns-express-server's address and those
// of dns-express-allow-notify [M], answered REFUSED otherwise; with
// dns-express-notify-tsig-verify yes and a key, an unsigned or badly
// signed one is answered NOTAUTH [M]. Bypass neither counts nor
// refreshes; consume and repeat refresh the zone at once and answer
// with AA set.
func (s *Store) Notify(wire []byte, r *dns.Msg, src netip.Addr) (m *dns.Msg, pass bool) {
	m = new(dns.Msg)
	m.SetReply(r)
	if len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeSOA {
		m.Rcode = dns.RcodeFormatError
		return m, false
	}
	z := s.enabled(strings.ToLower(r.Question[0].Name))
	if z == nil {
		m.Rcode = dns.RcodeRefused
		return m, true
	}
	cfg := z.cfg.Load()
	if cfg.NotifyAction == "bypass" {
		m.Rcode = dns.RcodeRefused
		return m, true
	}
	src = src.Unmap()
	if src != cfg.Server.Addr().Unmap() && !slices.Contains(cfg.AllowNotify, src) {
		z.rejected()
		m.Rcode = dns.RcodeRefused
		return m, false
	}
	if cfg.VerifyNotify && cfg.Key != nil {
		t := r.IsTsig()
		if t == nil || wire == nil || !strings.EqualFold(t.Hdr.Name, cfg.Key.Name) || !strings.EqualFold(t.Algorithm, cfg.Key.Algorithm) ||
			dns.TsigVerify(wire, cfg.Key.Secret, "", false) != nil {
			z.rejected()
			m.Rcode = dns.RcodeNotAuth
			return m, false
		}
	}
	z.notifies.Add(1)
	z.poke()
	m.Authoritative = true
	return m, cfg.NotifyAction == "repeat"
}

// enabled is the enabled zone named exactly qname.
func (s *Store) enabled(qname string) *Zone {
	ix := s.idx.Load()
	if ix == nil {
		return nil
	}
	for _, z := range ix.zones {
		if z.name == qname {
			return z
		}
	}
	return nil
}

func (z *Zone) rejected() {
	z.mu.Lock()
	z.st.NotifyRejected++
	z.mu.Unlock()
}
