package daemon

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// rrAsk sends one query for name (type A, EDNS when edns) over network
// to addr from 127.53.4.100 and describes the answer: rcode, flags, the
// answer's addresses, the authority and additional records' count.
func rrAsk(t *testing.T, network, addr, name string, edns bool) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	if edns {
		q.SetEdns0(1232, false)
	}
	src := net.ParseIP("127.53.4.100")
	c := &dns.Client{Net: network, Timeout: time.Second, Dialer: &net.Dialer{Timeout: time.Second, LocalAddr: &net.UDPAddr{IP: src}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: src}
	}
	m, _, err := c.Exchange(q, addr)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "timeout"
		}
		return "error " + err.Error()
	}
	out := []string{dns.RcodeToString[m.Rcode]}
	if m.Truncated {
		out = append(out, "tc")
	}
	if m.Authoritative {
		out = append(out, "aa")
	}
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	extra := 0
	for _, rr := range m.Extra {
		if rr.Header().Rrtype != dns.TypeOPT {
			extra++
		}
	}
	if len(m.Ns) > 0 || extra > 0 {
		out = append(out, fmt.Sprintf("ns %d extra %d", len(m.Ns), extra))
	}
	return strings.Join(out, " ")
}

// TestDNSRapidResponse: with enable-rapid-response a UDP query DNS
// Express answers is answered before the virtual's iRules (here one that
// drops every query), and one it does not gets the last action; TCP
// takes the usual path. unhandled-query-action hint answers the root's
// referral.
func TestDNSRapidResponse(t *testing.T) {
	t.Parallel()
	startXFRPrimary(t, "127.53.4.53:5311", "", "", dnsxZone(0))
	member := startDNSPoolMember(t, "127.53.4.20:5311", map[string]string{"www.example.org. A": "x 60 IN A 127.53.4.81"})
	x, s := dnsExpressEngine(t, "127.53.4.100")
	mustRun(t, s,
		"create ltm dns nameserver primary address 127.53.4.53 port 5311",
		"create ltm dns zone example.net dns-express-server primary",
		"create ltm pool dns_pool members add { 127.53.4.20:5311 }",
		"create ltm rule drop_all {\nwhen DNS_REQUEST {\n  DNS::drop\n}\n}",
		"create ltm profile dns rr enable-rapid-response yes",
		"create ltm virtual rr_udp destination 127.53.4.1:5311 ip-protocol udp profiles add { rr udp } pool dns_pool",
		"create ltm virtual rr_tcp destination 127.53.4.1:5311 ip-protocol tcp profiles add { rr tcp } pool dns_pool",
		"create ltm profile dns hint unhandled-query-action hint",
		"create ltm virtual hint_udp destination 127.53.4.2:5311 ip-protocol udp profiles add { hint udp }",
		"create ltm virtual hint_tcp destination 127.53.4.2:5311 ip-protocol tcp profiles add { hint tcp }",
	)
	if _, err := run(t, s, "modify ltm profile dns rr rapid-response-last-action sometimes"); err == "" {
		t.Error("rapid-response-last-action sometimes was taken")
	}
	waitZone(t, func() bool { return x.Zone("example.net").Stats().Loaded })
	const udp, tcp = "udp", "tcp"
	for _, tt := range []struct {
		name, last, rule, network, qname, want string
	}{
		{"the default last action is drop", "", "", udp, "www.example.org.", "timeout"},
		{"a zone's name: DNS Express answers", "", "", udp, "www.example.net.", "NOERROR aa 127.53.3.80"},
		{"a zone's name, before the iRule that drops all", "", "drop_all", udp, "www.example.net.", "NOERROR aa 127.53.3.80"},
		{"a zone's missing name: its NXDOMAIN", "", "", udp, "nope.example.net.", "NXDOMAIN aa ns 1 extra 0"},
		{"allow: on to the pool", "allow", "", udp, "www.example.org.", "NOERROR aa 127.53.4.81"},
		{"allow: the iRule then runs", "allow", "drop_all", udp, "www.example.org.", "timeout"},
		{"noerror", "noerror", "", udp, "www.example.org.", "NOERROR"},
		{"nxdomain", "nxdomain", "", udp, "www.example.org.", "NXDOMAIN"},
		{"refuse", "refuse", "", udp, "www.example.org.", "REFUSED"},
		{"truncate: TC", "truncate", "", udp, "www.example.org.", "NOERROR tc"},
		{"truncate: the TCP retry takes the usual path", "truncate", "", tcp, "www.example.org.", "NOERROR aa 127.53.4.81"},
		{"TCP: the iRule runs, even for a zone's name", "drop", "drop_all", tcp, "www.example.net.", "timeout"},
	} {
		last, rules := tt.last, "none"
		if last == "" {
			last = "drop"
		}
		if tt.rule != "" {
			rules = "{ " + tt.rule + " }"
		}
		mustRun(t, s, "modify ltm profile dns rr rapid-response-last-action "+last,
			"modify ltm virtual rr_udp rules "+rules, "modify ltm virtual rr_tcp rules "+rules)
		if got := rrAsk(t, tt.network, "127.53.4.1:5311", tt.qname, false); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := member.queries.Load(); n != 2 {
		t.Errorf("the member got %d queries, want 2 (allow and the TCP retry)", n)
	}
	out, _ := run(t, s, "show ltm profile dns rr")
	for _, re := range []string{`(?m)^Rapid Response$`, `(?m)^Answered +3$`, `(?m)^Last Action Allow +2$`, `(?m)^Last Action Drop +1$`,
		`(?m)^Last Action No Error +1$`, `(?m)^Last Action NXDOMAIN +1$`, `(?m)^Last Action Refuse +1$`, `(?m)^Last Action Truncate +1$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("show ltm profile dns lacks %s:\n%s", re, out)
		}
	}

	// unhandled-query-action hint: the root's referral, not authoritative.
	for _, tt := range []struct{ name, network, qname string }{
		{"UDP", udp, "www.example.org."},
		{"TCP", tcp, "www.example.org."},
	} {
		if got, want := rrAsk(t, tt.network, "127.53.4.2:5311", tt.qname, true), "NOERROR ns 13 extra 26"; got != want {
			t.Errorf("hint over %s: %q, want %q", tt.name, got, want)
		}
	}
	// Without EDNS the addresses that do not fit are left out, with TC.
	if got := rrAsk(t, udp, "127.53.4.2:5311", "www.example.org.", false); !regexp.MustCompile(`^NOERROR tc ns 13 extra \d+$`).MatchString(got) {
		t.Errorf("hint over UDP in 512 bytes: %q", got)
	}
	// The zone's names are still answered first.
	if got := rrAsk(t, udp, "127.53.4.2:5311", "www.example.net.", false); got != "NOERROR aa 127.53.3.80" {
		t.Errorf("hint, a zone's name: %q", got)
	}
}
