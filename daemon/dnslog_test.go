package daemon

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestDNSLogging(t *testing.T) {
	startXFRPrimary(t, "127.50.5.53:5312", "", "",
		"example.net. 300 IN SOA ns1.example.net. h.example.net. 3 3600 600 86400 60\n"+
			"example.net. 300 IN NS ns1.example.net.\nns1.example.net. 300 IN A 127.50.5.53\nwww.example.net. 300 IN A 127.50.5.80\n")
	sink, err := net.ListenPacket("udp", "127.50.5.50:5514")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	x, s := dnsExpressEngine(t, "127.50.5.100")

	for _, r := range []struct{ cmd, want string }{
		{"create ltm profile dns bad enable-logging yes log-profile nosuch", "01020036"},
		{"create ltm profile dns-logging badlog log-publisher nosuch", "01020036"},
	} {
		if _, err := run(t, s, r.cmd); !strings.Contains(err, r.want) {
			t.Errorf("%s: %q, want %q", r.cmd, err, r.want)
		}
	}
	mustRun(t, s,
		"modify sys global-settings hostname lb1.example.net",
		"create ltm pool log_pool members add { 127.50.5.50:5514 }",
		"create sys log-config destination remote-high-speed-log dns_hsl pool-name log_pool protocol udp",
		"create sys log-config publisher dns_pub destinations replace-all-with { dns_hsl }",
		"create ltm profile dns-logging dnslog log-publisher dns_pub",
		"create ltm dns nameserver primary address 127.50.5.53 port 5312",
		"create ltm dns zone example.net dns-express-server primary",
		"create ltm profile dns dnsl enable-logging yes log-profile dnslog",
		"create ltm virtual dnsl_udp destination 127.50.5.1:5312 ip-protocol udp profiles add { dnsl udp }",
		"create ltm virtual dnsl_tcp destination 127.50.5.1:5312 ip-protocol tcp profiles add { dnsl tcp }",
	)
	if _, err := run(t, s, "modify ltm profile dns dnsl log-profile none"); !strings.Contains(err, "needs a log-profile") {
		t.Errorf("enable-logging yes without a log-profile: %q", err)
	}
	for i := 0; !x.Zone("example.net").Stats().Loaded; i++ {
		if i == 200 {
			t.Fatal("the zone was not transferred in")
		}
		time.Sleep(25 * time.Millisecond)
	}
	lines := func(n int) []string { return sinkLines(sink, n) }
	ts := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d lb1\.example\.net `
	for _, tt := range []struct {
		name, modify, network, qname string
		want                         []string
	}{
		{"the defaults: queries, with time, source and view", "", "udp", "www.example.net.",
			[]string{`^` + ts + `from 127\.50\.5\.100#\d+: view none: query: www\.example\.net IN A \+E \(127\.50\.5\.1%0\)$`}},
		{"query id, responses with the complete answer", "enable-response-logging yes include-query-id yes", "udp", "www.example.net.",
			[]string{
				`^` + ts + `qid \d+ from 127\.50\.5\.100#\d+: view none: query: www\.example\.net IN A \+E \(127\.50\.5\.1%0\)$`,
				`^` + ts + `qid \d+ to 127\.50\.5\.100#\d+: view none: \[NOERROR qr,aa,rd\] response: www\.example\.net\. 300 IN A 127\.50\.5\.80;$`,
			}},
		{"over TCP, NXDOMAIN carries the SOA", "", "tcp", "nope.example.net.",
			[]string{
				`query: nope\.example\.net IN A \+E`,
				`\[NXDOMAIN qr,aa,rd\] response: example\.net\. 60 IN SOA ns1\.example\.net\. h\.example\.net\. 3 `,
			}},
		{"responses alone, bare: the answer section only", "enable-query-logging no include-timestamp no include-source no include-view no include-query-id no include-complete-answer no", "udp", "nope.example.net.",
			[]string{`^\[NXDOMAIN qr,aa,rd\] response: empty$`}},
	} {
		if tt.modify != "" {
			mustRun(t, s, "modify ltm profile dns-logging dnslog "+tt.modify)
		}
		m := new(dns.Msg)
		m.SetQuestion(tt.qname, dns.TypeA)
		m.SetEdns0(1232, false)
		if got := xAsk(t, tt.network, "127.50.5.100", "127.50.5.1:5312", m); strings.HasPrefix(got, "error") {
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
	// enable-logging no: nothing more is sent.
	mustRun(t, s, "modify ltm profile dns dnsl enable-logging no")
	xAsk(t, "udp", "127.50.5.100", "127.50.5.1:5312", query("www.example.net.", dns.TypeA))
	sink.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _, err := sink.ReadFrom(make([]byte, 4096)); err == nil {
		t.Errorf("enable-logging no: a line was sent (%d bytes)", n)
	}
}

// sinkLines reads a log sink until it has n lines, or until none has
// come for 3 s.
func sinkLines(sink net.PacketConn, n int) []string {
	var out []string
	buf := make([]byte, 4096)
	for len(out) < n {
		sink.SetReadDeadline(time.Now().Add(3 * time.Second))
		k, _, err := sink.ReadFrom(buf)
		if err != nil {
			break
		}
		out = append(out, string(buf[:k]))
	}
	return out
}
