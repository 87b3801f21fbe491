package dnsvs

import (
	"net/netip"
	"regexp"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func TestLogLines(t *testing.T) {
	var got []string
	e := New(nil)
	e.SetLogSender(func(pub string, line []byte) bool {
		if pub != "/Common/pub" {
			t.Errorf("sent to %s", pub)
		}
		got = append(got, string(line))
		return true
	})
	all := config.DNSLog{Publisher: "/Common/pub", Hostname: "lb1", Query: true, Response: true, CompleteAnswer: true, QueryID: true, Source: true, Timestamp: true, View: true}
	client, local := netip.MustParseAddrPort("127.50.7.9:40000"), netip.MustParseAddrPort("127.50.7.1:53")
	q := new(dns.Msg)
	q.SetQuestion("www.example.com.", dns.TypeAAAA)
	q.Id = 4242
	q.SetEdns0(1232, true)
	a := new(dns.Msg)
	a.SetReply(q)
	a.Authoritative = true
	rr, _ := dns.NewRR("www.example.com. 30 IN AAAA 2001:db8::1")
	soa, _ := dns.NewRR("example.com. 60 IN SOA ns1.example.com. h.example.com. 1 2 3 4 5")
	a.Answer, a.Ns = []dns.RR{rr}, []dns.RR{soa}
	for _, tt := range []struct {
		name string
		mod  func(*config.DNSLog)
		want []string
	}{
		{"everything", func(*config.DNSLog) {}, []string{
			`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d lb1 qid 4242 from 127\.50\.7\.9#40000: view none: query: www\.example\.com IN AAAA \+ED \(127\.50\.7\.1%0\)$`,
			`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d lb1 qid 4242 to 127\.50\.7\.9#40000: view none: \[NOERROR qr,aa,rd\] response: www\.example\.com\. 30 IN AAAA 2001:db8::1; example\.com\. 60 IN SOA ns1\.example\.com\. h\.example\.com\. 1 2 3 4 5;$`,
		}},
		{"bare", func(l *config.DNSLog) {
			l.QueryID, l.Source, l.Timestamp, l.View, l.CompleteAnswer = false, false, false, false, false
		}, []string{
			`^query: www\.example\.com IN AAAA \+ED \(127\.50\.7\.1%0\)$`,
			`^\[NOERROR qr,aa,rd\] response: www\.example\.com\. 30 IN AAAA 2001:db8::1;$`,
		}},
		{"queries only", func(l *config.DNSLog) { l.Response = false }, []string{`query: www\.example\.com`}},
		{"responses only", func(l *config.DNSLog) { l.Query = false }, []string{`response: www\.example\.com`}},
	} {
		cfg := all
		tt.mod(&cfg)
		got = nil
		l := newLogger(e, &cfg)
		l.query(q, client, local)
		l.response(a, client)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %d lines", tt.name, got, len(tt.want))
			continue
		}
		for i, re := range tt.want {
			if !regexp.MustCompile(re).MatchString(got[i]) {
				t.Errorf("%s: %q does not match %s", tt.name, got[i], re)
			}
		}
	}
	// Nothing to log, or nowhere to send it: no logger, no cost.
	for _, l := range []*config.DNSLog{nil, {Publisher: "/Common/pub"}, {Query: true, Response: true}} {
		if newLogger(e, l) != nil {
			t.Errorf("%+v: a logger", l)
		}
	}
}
