package daemon

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestDNSCacheRecords: show ltm dns cache records lists a transparent
// cache's answers and record sets with their filters, delete drops only
// what matches (the member is asked again for it alone), and bad words
// are refused with what would be valid.
func TestDNSCacheRecords(t *testing.T) {
	s, member := cacheVirtual(t, "127.179", map[string]string{ // dnsvs_cache_test.go
		"a.example.net. A":    "x 300 IN A 127.179.9.40",
		"b.example.net. A":    "x 300 IN A 127.179.9.41",
		"a.example.net. AAAA": "x 300 IN AAAA 2001:db8::40",
	})
	const vip = "127.179.2.1:5300"
	type ask struct {
		name string
		t    uint16
	}
	steps := []struct {
		asks  []ask
		cmd   string
		out   []string // lines (as regexps) the output holds
		not   []string // lines it must not hold
		err   string
		asked int64 // the member's queries after the step
	}{
		{asks: []ask{{"a.example.net", dns.TypeA}, {"b.example.net", dns.TypeA}, {"a.example.net", dns.TypeAAAA}},
			cmd: "show ltm dns cache records msg cache c1", out: []string{`^DNS Cache Records: c1 \(msg\)$`, `^  Name +Type +Class`, `^  a\.example\.net\. +A +IN +no +NOERROR +\d+ +\d+$`, `^  a\.example\.net\. +AAAA `, `^  b\.example\.net\. +A `}, asked: 3},
		{cmd: "show ltm dns cache records msg cache c1 type aaaa", out: []string{`^  a\.example\.net\. +AAAA `}, not: []string{` A `}, asked: 3},
		{cmd: "show ltm dns cache records rrset cache c1 key A.Example.Net", out: []string{`^  a\.example\.net\.\s+\d+\s+IN\s+A\s+127\.179\.9\.40$`, `^  a\.example\.net\.\s+\d+\s+IN\s+AAAA\s+2001:db8::40$`}, not: []string{`b\.example`}, asked: 3},
		{cmd: "show ltm dns cache records rrset cache c1 key nosuch.example.net", out: []string{`^  \(no rrsets\)$`}, asked: 3},
		{cmd: "show ltm dns cache records all cache c1", out: []string{`\(msg\)`, `\(rrset\)`, `^  \(no nameservers\)$`, `^  \(no keys\)$`}, asked: 3},
		// One name, one type: only that answer goes.
		{cmd: "delete ltm dns cache records rrset cache c1 key a.example.net type a", asked: 3},
		{asks: []ask{{"a.example.net", dns.TypeA}, {"a.example.net", dns.TypeAAAA}, {"b.example.net", dns.TypeA}}, cmd: "show ltm dns cache records msg cache c1", out: []string{`^  a\.example\.net\. +A `}, asked: 4},
		{cmd: "delete ltm dns cache records msg cache c1 key b.example.net", asked: 4},
		{asks: []ask{{"b.example.net", dns.TypeA}, {"a.example.net", dns.TypeA}}, cmd: "show ltm dns cache records msg cache c1", asked: 5},
		{cmd: "delete ltm dns cache records all cache c1 type aaaa", asked: 5},
		{asks: []ask{{"a.example.net", dns.TypeAAAA}, {"a.example.net", dns.TypeA}}, cmd: "show ltm dns cache records msg cache c1", asked: 6},
		{cmd: "delete ltm dns cache records all cache c1", asked: 6},
		{cmd: "show ltm dns cache records msg cache c1", out: []string{`^  \(no records\)$`}, asked: 6},
		// Refused, with what is valid.
		{cmd: "show ltm dns cache records msg cache c1 type nosuch", err: "is not a record type", asked: 6},
		{cmd: "show ltm dns cache records nameserver cache c1 type a", err: "type is not taken by nameserver records", asked: 6},
		{cmd: "show ltm dns cache records msg key a.example.net", err: "cache NAME is required", asked: 6},
		{cmd: "show ltm dns cache records msg cache c1 owner x", err: `"owner" unexpected`, asked: 6},
		{cmd: "show ltm dns cache records msg cache c1 key", err: "key needs a value", asked: 6},
		{cmd: "show ltm dns cache records msg cache c1 cache c1", err: "cache given twice", asked: 6},
		{cmd: "show ltm dns cache records records cache c1", err: "expected msg|rrset|nameserver|key|all", asked: 6},
		{cmd: "delete ltm dns cache records rrset cache nosuch", err: "not found", asked: 6},
	}
	for i, st := range steps {
		for _, a := range st.asks {
			if got := recordsAsk(t, vip, a.name, a.t); got != "NOERROR" {
				t.Fatalf("step %d: %s: %q", i, a.name, got)
			}
		}
		checkStep(t, s, i, st.cmd, st.err, st.out, st.not)
		if n := member.queries.Load(); n != st.asked {
			t.Errorf("step %d: the member got %d queries, want %d", i, n, st.asked)
		}
	}
}

// TestCompleteDNSCacheRecords: the shell offers the kinds, the options
// not yet given and the caches' names.
func TestCompleteDNSCacheRecords(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{"create ltm dns cache transparent tc", "create ltm dns cache resolver rc", "create ltm dns cache validating-resolver vc"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct{ line, want, not string }{
		{"show ltm dns cache records ", "msg rrset nameserver key all", ""},
		{"show ltm dns cache records rrset ", "cache key type", ""},
		{"delete ltm dns cache records rrset cache ", "tc rc vc", "cache"},
		{"show ltm dns cache records msg cache tc ", "key type", "cache"},
		{"show ltm dns cache records nameserver cache rc ", "key", "type"},
		{"show ltm dns cache records rrset cache rc type ", "A AAAA CNAME", ""},
	} {
		got := map[string]bool{}
		for _, sg := range s.Complete(tc.line) {
			got[sg.Text] = true
		}
		for _, w := range strings.Fields(tc.want) {
			if !got[w] {
				t.Errorf("Complete(%q) = %v, want it to offer %q", tc.line, got, w)
			}
		}
		for _, w := range strings.Fields(tc.not) {
			if got[w] {
				t.Errorf("Complete(%q) = %v, want it not to offer %q", tc.line, got, w)
			}
		}
	}
}

// recordsAsk sends one UDP query from the test's own range and returns
// the answer's rcode ("error ..." when none came).
func recordsAsk(t *testing.T, addr, name string, qtype uint16) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP("127.179.0.100")}}}
	m, _, err := c.Exchange(q, addr)
	if err != nil {
		return "error " + err.Error()
	}
	if len(m.Answer) == 0 {
		return "empty " + dns.RcodeToString[m.Rcode]
	}
	return dns.RcodeToString[m.Rcode]
}
