package dnszone

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

const zoneText = `$ORIGIN example.com.
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

func parse(t *testing.T, text string) []dns.RR {
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

// describe is an answer in one line: rcode, AA, then each section's
// records as "name type data".
func describe(m *dns.Msg) string {
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

func TestAnswer(t *testing.T) {
	d := Build("example.com.", parse(t, zoneText))
	if d.SOA() == nil || d.SOA().Serial != 1 || d.Count() != 12 {
		t.Fatalf("built %d records, SOA %v", d.Count(), d.SOA())
	}
	tests := []struct {
		name  string
		qtype uint16
		want  string
	}{
		{"www.example.com.", dns.TypeA, "NOERROR aa an:www.example.com. A 127.32.1.1"},
		{"WWW.Example.com.", dns.TypeA, "NOERROR aa an:WWW.Example.com. A 127.32.1.1"}, // the asker's case
		{"www.example.com.", dns.TypeAAAA, "NOERROR aa ns:example.com. SOA ns1.example.com."},
		{"nope.example.com.", dns.TypeA, "NXDOMAIN aa ns:example.com. SOA ns1.example.com."},
		{"b.c.example.com.", dns.TypeA, "NOERROR aa ns:example.com. SOA ns1.example.com."}, // empty non-terminal
		{"alias.example.com.", dns.TypeA, "NOERROR aa an:alias.example.com. CNAME www.example.com. an:www.example.com. A 127.32.1.1"},
		{"x.wild.example.com.", dns.TypeA, "NOERROR aa an:x.wild.example.com. A 127.32.1.3"},
		{"y.x.wild.example.com.", dns.TypeTXT, "NOERROR aa an:y.x.wild.example.com. TXT \"any\""},
		{"x.wild.example.com.", dns.TypeMX, "NOERROR aa ns:example.com. SOA ns1.example.com."},
		{"host.sub.example.com.", dns.TypeA, "NOERROR ns:sub.example.com. NS ns.sub.example.com. ad:ns.sub.example.com. A 127.32.1.4"},
		{"sub.example.com.", dns.TypeDS, "NOERROR aa ns:example.com. SOA ns1.example.com."},
		{"example.com.", dns.TypeMX, "NOERROR aa an:example.com. MX 10 ad:mail.example.com. A 127.32.1.25"},
		{"example.com.", dns.TypeNS, "NOERROR aa an:example.com. NS ns1.example.com. ad:ns1.example.com. A 127.32.1.53"},
	}
	for _, tt := range tests {
		m := new(dns.Msg)
		m.SetQuestion(tt.name, tt.qtype)
		r := new(dns.Msg)
		r.SetReply(m)
		d.Answer(r, strings.ToLower(tt.name), tt.name, tt.qtype)
		if got := describe(r); got != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.name, dns.TypeToString[tt.qtype], got, tt.want)
		}
	}
	// The negative answer's SOA TTL is the SOA minimum (RFC 2308).
	if n := d.Negative(); n.Header().Ttl != 60 {
		t.Errorf("negative TTL %d, want 60", n.Header().Ttl)
	}
}
