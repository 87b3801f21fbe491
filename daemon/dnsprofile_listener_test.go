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

// dnsxZone is example.net with n TXT records, serial 7.
func dnsxZone(n int) string {
	var b strings.Builder
	b.WriteString("example.net. 300 IN SOA ns1.example.net. h.example.net. 7 3600 600 86400 60\n")
	b.WriteString("example.net. 300 IN NS ns1.example.net.\nns1.example.net. 300 IN A 127.53.3.53\nwww.example.net. 300 IN A 127.53.3.80\n")
	for i := range n {
		fmt.Fprintf(&b, "t%d.example.net. 300 IN TXT \"record number %d of the zone\"\n", i, i)
	}
	return b.String()
}

// waitZone waits for DNS Express's copy of example.net.
func waitZone(t *testing.T, loaded func() bool) {
	t.Helper()
	for i := 0; !loaded(); i++ {
		if i == 200 {
			t.Fatal("the zone was not transferred in")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// udpXfr asks for a transfer of example.net over UDP from src (an IXFR
// from serial when ixfr), with an EDNS size when edns > 0, and describes
// the one answer.
func udpXfr(t *testing.T, src, addr string, ixfr bool, serial uint32, edns uint16) string {
	t.Helper()
	q := new(dns.Msg)
	if ixfr {
		q.SetIxfr("example.net.", serial, "ns1.example.net.", "h.example.net.")
	} else {
		q.SetAxfr("example.net.")
	}
	if edns > 0 {
		q.SetEdns0(edns, false)
	}
	c := &dns.Client{Net: "udp", UDPSize: 65535, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		return "error " + err.Error()
	}
	out := fmt.Sprintf("%s %d records", dns.RcodeToString[r.Rcode], len(r.Answer))
	if r.Truncated {
		out += " tc"
	}
	return out
}

// TestDNSListenerLoggingAndTransfers: a gtm listener's dns profile logs
// its queries and answers through the logging profile's publisher and,
// with process-xfr yes, transfers DNS Express's zones over TCP; a
// transfer asked over UDP, of a listener or a virtual, is answered as
// BIND answers it.
func TestDNSListenerLoggingAndTransfers(t *testing.T) {
	startXFRPrimary(t, "127.53.3.53:5311", "", "", dnsxZone(40))
	sink, err := net.ListenPacket("udp", "127.53.3.50:5514")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	x, s := dnsExpressEngine(t, "127.53.3.100")
	mustRun(t, s,
		"modify sys global-settings hostname lb1.example.net",
		"create ltm pool log_pool members add { 127.53.3.50:5514 }",
		"create sys log-config destination remote-high-speed-log dns_hsl pool-name log_pool protocol udp",
		"create sys log-config publisher dns_pub destinations replace-all-with { dns_hsl }",
		"create ltm profile dns-logging dnslog log-publisher dns_pub enable-response-logging yes include-complete-answer no",
		"create ltm dns nameserver primary address 127.53.3.53 port 5311",
		"create ltm dns nameserver open address 127.53.3.61",
		"create ltm dns zone example.net dns-express-server primary transfer-clients { open }",
		"create ltm profile dns gtmdns process-xfr yes enable-logging yes log-profile dnslog",
		"create gtm listener gl_udp address 127.53.3.1 port 5311 ip-protocol udp profiles add { gtmdns }",
		"create gtm listener gl_tcp address 127.53.3.1 port 5311 ip-protocol tcp profiles add { gtmdns }",
		"create gtm listener plain_tcp address 127.53.3.2 port 5311 ip-protocol tcp",
		"create ltm virtual xfr_udp destination 127.53.3.3:5311 ip-protocol udp profiles add { gtmdns udp }",
	)
	if _, err := run(t, s, "modify ltm profile dns gtmdns log-profile none"); !strings.Contains(err, "needs a log-profile") {
		t.Errorf("enable-logging yes without a log-profile: %q", err)
	}
	waitZone(t, func() bool { return x.Zone("example.net").Stats().Loaded })
	lines := func(n int) []string { return sinkLines(sink, n) }
	ts := `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d lb1\.example\.net `
	for _, tt := range []struct {
		name, network string
		want          []string
	}{
		{"UDP", "udp", []string{
			ts + `from 127\.53\.3\.61#\d+: view none: query: www\.example\.net IN A \+ \(127\.53\.3\.1%0\)$`,
			ts + `to 127\.53\.3\.61#\d+: view none: \[NOERROR qr,aa,rd\] response: www\.example\.net\. 300 IN A 127\.53\.3\.80;$`}},
		{"TCP", "tcp", []string{
			ts + `from 127\.53\.3\.61#\d+: view none: query: www\.example\.net IN A \+ \(127\.53\.3\.1%0\)$`,
			ts + `to 127\.53\.3\.61#\d+: view none: \[NOERROR qr,aa,rd\] response: www\.example\.net\. 300 IN A 127\.53\.3\.80;$`}},
	} {
		if got := xAsk(t, tt.network, "127.53.3.61", "127.53.3.1:5311", query("www.example.net.", dns.TypeA)); got != "NOERROR aa 127.53.3.80" {
			t.Fatalf("%s: %s", tt.name, got)
		}
		got := lines(len(tt.want))
		if len(got) != len(tt.want) {
			t.Errorf("%s: %d lines, want %d: %q", tt.name, len(got), len(tt.want), got)
			continue
		}
		for i, re := range tt.want {
			if !regexp.MustCompile(re).MatchString(got[i]) {
				t.Errorf("%s: line %d %q does not match %s", tt.name, i, got[i], re)
			}
		}
	}

	const whole = "45 records 1 messages soa 7..7" // the SOA again at the end
	for _, tt := range []struct {
		name, src, addr string
		ixfr            bool
		serial          uint32
		want            string
	}{
		{"TCP AXFR on the gtm listener", "127.53.3.61", "127.53.3.1:5311", false, 0, whole},
		{"TCP IXFR, current: the SOA", "127.53.3.61", "127.53.3.1:5311", true, 7, "1 records 1 messages soa 7..7"},
		{"TCP AXFR, not a transfer client", "127.53.3.62", "127.53.3.1:5311", false, 0, "error dns: bad xfr rcode: 5"},
	} {
		if got := xfrIn(t, tt.src, tt.addr, "example.net.", tt.ixfr, tt.serial, "", ""); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// Without process-xfr an AXFR is a query as before: DNS Express has
	// no record of that type.
	if got := xfrRefusal(t, "127.53.3.61", "127.53.3.2:5311", "example.net.", "", ""); got != "NOERROR" {
		t.Errorf("a listener without process-xfr: %q, want NOERROR", got)
	}
	for _, tt := range []struct {
		name, src, addr string
		ixfr            bool
		serial          uint32
		edns            uint16
		want            string
	}{
		{"UDP AXFR to the listener: FORMERR", "127.53.3.61", "127.53.3.1:5311", false, 0, 4096, "FORMERR 0 records"},
		{"UDP IXFR behind, over the listener's 1232 bytes: the SOA", "127.53.3.61", "127.53.3.1:5311", true, 3, 4096, "NOERROR 1 records"},
		{"UDP IXFR behind, too big: the SOA", "127.53.3.61", "127.53.3.1:5311", true, 3, 0, "NOERROR 1 records"},
		{"UDP IXFR current: the SOA", "127.53.3.61", "127.53.3.1:5311", true, 7, 0, "NOERROR 1 records"},
		{"UDP IXFR, not a transfer client", "127.53.3.62", "127.53.3.1:5311", true, 3, 0, "REFUSED 0 records"},
		{"UDP AXFR to the virtual: FORMERR", "127.53.3.61", "127.53.3.3:5311", false, 0, 4096, "FORMERR 0 records"},
		{"UDP IXFR to the virtual, fits", "127.53.3.61", "127.53.3.3:5311", true, 3, 8192, "NOERROR 45 records"},
	} {
		if got := udpXfr(t, tt.src, tt.addr, tt.ixfr, tt.serial, tt.edns); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// Rapid Response on the listener: DNS Express's names, and the last
	// action for the others (which the listener would otherwise refuse).
	mustRun(t, s, "modify ltm profile dns gtmdns enable-rapid-response yes rapid-response-last-action nxdomain")
	for _, tt := range []struct{ network, qname, want string }{
		{"udp", "www.example.net.", "NOERROR aa 127.53.3.80"},
		{"udp", "www.example.org.", "NXDOMAIN"},
		{"tcp", "www.example.org.", "REFUSED"},
	} {
		if got := xAsk(t, tt.network, "127.53.3.61", "127.53.3.1:5311", query(tt.qname, dns.TypeA)); got != tt.want {
			t.Errorf("rapid response on the listener, %s %s: %q, want %q", tt.network, tt.qname, got, tt.want)
		}
	}
	out, _ := run(t, s, "show ltm dns zone example.net")
	if !regexp.MustCompile(`(?m)^Answered +6$`).MatchString(out) {
		t.Errorf("show ltm dns zone: want 6 transfers answered:\n%s", out)
	}
}
