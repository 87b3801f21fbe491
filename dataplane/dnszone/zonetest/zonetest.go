// Package zonetest holds what the zone and DNS Express tests share: one
// zone with each kind of name a lookup must tell apart, its parser, and
// an answer written on one line, so that both packages' tests read their
// expectations against the same data.
package zonetest

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Example is example.com. with an apex (SOA, NS, MX), plain, CNAME,
// empty non-terminal (b.c), wildcard and delegated (sub) names: the
// cases an authoritative answer differs on.
const Example = `$ORIGIN example.com.
$TTL 300
@ IN SOA ns1 hostmaster 1 3600 600 86400 60
@ IN NS ns1
@ IN MX 10 mail
ns1 IN A 127.32.1.53
mail IN A 127.32.1.25
www IN A 127.32.1.1
alias IN CNAME www
a.b.c IN A 127.32.1.2
*.wild IN A 127.32.1.3
*.wild IN TXT "any"
sub IN NS ns.sub
ns.sub IN A 127.32.1.4
`

// Parse reads zone text with origin example.com., failing the test on
// a syntax error, so a test states its zone as text.
func Parse(t testing.TB, text string) []dns.RR {
	t.Helper()
	zp := dns.NewZoneParser(strings.NewReader(text), "example.com.", "")
	var rrs []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	return rrs
}

// Describe is an answer in one line: rcode, AA, then each section's
// records as "name type data", so an expectation is one string.
func Describe(m *dns.Msg) string {
	out := []string{dns.RcodeToString[m.Rcode]}
	if m.Authoritative {
		out = append(out, "aa")
	}
	sec := func(tag string, rrs []dns.RR) {
		for _, rr := range rrs {
			h := rr.Header()
			data := strings.TrimPrefix(rr.String(), h.String())
			out = append(out, tag+":"+h.Name+" "+dns.TypeToString[h.Rrtype]+" "+strings.Fields(data)[0])
		}
	}
	sec("an", m.Answer)
	sec("ns", m.Ns)
	sec("ad", m.Extra)
	return strings.Join(out, " ")
}
