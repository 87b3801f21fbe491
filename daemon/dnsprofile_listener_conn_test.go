package daemon

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestDNSListenerQueryFlows: a UDP query a gtm listener's dns profile
// sends to its cache's forward zone is a row of show sys connection
// while it waits (the client, the listener, the name server), gone once
// answered; delete sys connection ends it: no answer, no other name
// server asked, counted under Deleted While Waiting.
func TestDNSListenerQueryFlows(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.210.4.54"), Port: 30353})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	got := make(chan struct{}, 8)
	go func() { // reads each query and never answers
		b := make([]byte, 2048)
		for {
			if _, _, err := silent.ReadFromUDP(b); err != nil {
				return
			}
			got <- struct{}{}
		}
	}()
	upstream := startDNSPoolMember(t, "127.210.4.55:30353", map[string]string{"a.ok.test. A": "x 60 IN A 127.210.4.77"})
	_, s := dnsExpressEngine(t, "127.210.4.100")
	mustRun(t, s,
		"create ltm dns cache resolver rc forward-zones replace-all-with { ok.test { nameservers replace-all-with { 127.210.4.55:30353 { } } } silent.test { nameservers replace-all-with { 127.210.4.54:30353 { } } } }",
		"create ltm profile dns gp_dns enable-cache yes cache rc",
		"create gtm listener gl address 127.210.4.1 port 30353 ip-protocol udp profiles add { gp_dns }",
	)
	const listener = "127.210.4.1:30353"
	rows := func(client string) string {
		out, _ := run(t, s, "show sys connection cs-client-addr "+client)
		return out
	}
	for _, tc := range []struct {
		name, client, qname string
		delete              bool
		want                string
		server              string // the row's server side while it waits
	}{
		{"answered", "127.210.4.61", "a.ok.test.", false, "NOERROR aa 127.210.4.77", ""},
		{"deleted while waiting", "127.210.4.62", "x.silent.test.", true, "timeout", "127.210.4.54:30353"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := make(chan string, 1)
			go func() { answer <- xAsk(t, "udp", tc.client, listener, query(tc.qname, dns.TypeA)) }()
			if tc.delete {
				row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tc.client) + `:\d+  ` + regexp.QuoteMeta(listener) + `  [0-9.]+:\d+  ` + regexp.QuoteMeta(tc.server) + `  udp`)
				var out string
				for i := 0; i < 200; i++ {
					if out = rows(tc.client); row.MatchString(out) {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !row.MatchString(out) {
					t.Fatalf("the waiting query's row is not in the table:\n%s", out)
				}
				mustRun(t, s, "delete sys connection cs-client-addr "+tc.client)
			}
			var a string
			select {
			case a = <-answer:
			case <-time.After(20 * time.Second):
				t.Fatal("no result from the client")
			}
			if strings.HasPrefix(a, "error") && strings.Contains(a, "timeout") {
				a = "timeout"
			}
			if a != tc.want {
				t.Errorf("answer %q, want %q", a, tc.want)
			}
			if out := rows(tc.client); !strings.Contains(out, "Total records returned: 0") {
				t.Errorf("the query is still in the table:\n%s", out)
			}
		})
	}
	if n := upstream.queries.Load(); n != 1 {
		t.Errorf("the answering name server got %d queries, want 1", n)
	}
	if n := len(got); n != 1 {
		t.Errorf("the silent name server got %d queries, want 1", n)
	}
	out, _ := run(t, s, "show ltm profile dns gp_dns")
	if !regexp.MustCompile(`Deleted While Waiting\s+1\b`).MatchString(out) {
		t.Errorf("show ltm profile dns: want one query deleted while waiting\n%s", out)
	}
}
