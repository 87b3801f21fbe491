package dnsvs

import (
	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor"
)

// Root hints' TTLs, as IANA's named.root gives them.
const (
	hintNSTTL   = 518400
	hintAddrTTL = 3600000
)

// rootNS and rootGlue are the root's name servers and their addresses
// (recursor.DefaultRootHints, IANA's root hints: a.root-servers.net's
// IPv4 and IPv6 address first, then b's, to m's).
var rootNS, rootGlue = rootHints()

func rootHints() (ns, glue []dns.RR) {
	for i, ap := range recursor.DefaultRootHints {
		name := string(rune('a'+i/2)) + ".root-servers.net."
		if i%2 == 0 {
			ns = append(ns, &dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: hintNSTTL}, Ns: name})
		}
		a := ap.Addr()
		if a.Is4() {
			glue = append(glue, &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: hintAddrTTL}, A: a.AsSlice()})
		} else {
			glue = append(glue, &dns.AAAA{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: hintAddrTTL}, AAAA: a.AsSlice()})
		}
	}
	return ns, glue
}

// hintReply is unhandled-query-action hint's answer to r: a referral to
// the root, as BIND answers from its hint zone a query it neither holds
// nor recurses for — NOERROR, not authoritative, no answer, the root's
// NS records in the authority section and their addresses in the
// additional section [M: BIG-IP's exact shape is not documented]. Over
// UDP the addresses that do not fit the client's size are left out
// before anything else (dns.Msg.Truncate).
func hintReply(r *dns.Msg) *dns.Msg {
	m := reply(r, dns.RcodeSuccess)
	m.Ns = make([]dns.RR, 0, len(rootNS))
	for _, rr := range rootNS {
		m.Ns = append(m.Ns, dns.Copy(rr)) // a DNS_RESPONSE rule may edit them
	}
	extra := make([]dns.RR, 0, len(rootGlue)+1)
	for _, rr := range rootGlue {
		extra = append(extra, dns.Copy(rr))
	}
	m.Extra = append(extra, m.Extra...)
	return m
}
