package dnszone

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone/zonetest"
)

const zoneText = zonetest.Example

func TestAnswer(t *testing.T) {
	d := Build("example.com.", zonetest.Parse(t, zoneText))
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
		if got := zonetest.Describe(r); got != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.name, dns.TypeToString[tt.qtype], got, tt.want)
		}
	}
	// The negative answer's SOA TTL is the SOA minimum (RFC 2308).
	if n := d.Negative(); n.Header().Ttl != 60 {
		t.Errorf("negative TTL %d, want 60", n.Header().Ttl)
	}
}
