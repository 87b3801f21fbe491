package daemon

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/objects"
)

// gtm monitors become the GSLB's probes with BIG-IP DNS's timing and
// their defaults-from chain; a gtm object's monitor names the gtm
// monitor before an ltm one of the same name.
func TestTranslateGTMMonitors(t *testing.T) {
	const conf = `
gtm monitor http /Common/my_http { defaults-from /Common/http send "GET /health HTTP/1.0\r\n\r\n" recv "200 OK" interval 10 timeout 31 probe-timeout 2 }
gtm monitor http /Common/my_http_child { defaults-from /Common/my_http ignore-down-response enabled reverse enabled }
gtm monitor udp /Common/my_udp { defaults-from /Common/udp send "ping" recv "pong" probe-attempts 2 probe-interval 3 destination *:5353 }
gtm monitor tcp-half-open /Common/my_half { defaults-from /Common/tcp_half_open destination 127.16.142.9:22 }
gtm monitor tcp /Common/bad_pt { defaults-from /Common/tcp probe-timeout 0 }
gtm monitor https /Common/my_https { defaults-from /Common/https cipherlist ECDHE-RSA-AES128-GCM-SHA256 compatibility disabled }
ltm monitor http /Common/only_ltm { interval 7 timeout 22 }
gtm datacenter /Common/dc1 { }
gtm server /Common/s1 {
    datacenter /Common/dc1
    addresses { 127.16.142.10 { } }
    virtual-servers {
        http { destination 127.16.142.11:80 monitor /Common/my_http }
        child { destination 127.16.142.11:81 monitor /Common/my_http_child }
        udp { destination 127.16.142.11:53 monitor /Common/my_udp }
        half { destination 127.16.142.11:82 monitor /Common/my_half }
        icmp { destination 127.16.142.11:83 monitor /Common/gateway_icmp }
        builtin { destination 127.16.142.11:84 monitor /Common/http }
        ltm { destination 127.16.142.11:85 monitor /Common/only_ltm }
        bigip { destination 127.16.142.11:86 monitor /Common/bigip }
        bad { destination 127.16.142.11:87 monitor /Common/bad_pt }
        https { destination 127.16.142.11:443 monitor /Common/my_https }
    }
}
`
	gc, kept, err := TranslateGSLB(objects.Default, gtmConfig(t, conf))
	if err != nil {
		t.Fatal(err)
	}
	vs := map[string]gslb.Monitor{}
	for _, v := range gc.Servers["/Common/s1"].VirtualServers {
		vs[v.Name] = v.Monitor
	}
	type timing struct {
		Type              monitor.Type
		Interval, Timeout time.Duration
		ProbeTimeout      time.Duration
		DownOnResponse    bool
		Attempts          int
		AttemptInterval   time.Duration
		Send, Recv        string
		Reverse           bool
		Destination       netip.AddrPort
	}
	of := func(m gslb.Monitor) timing {
		s := m.Spec
		if s == nil {
			return timing{}
		}
		recv := ""
		if s.Recv != nil {
			recv = s.Recv.String()
		}
		return timing{s.Type, s.Interval, s.Timeout, s.ProbeTimeout, s.DownOnResponse, s.Attempts, s.AttemptInterval, s.Send, recv, s.Reverse, m.Destination}
	}
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	for _, tc := range []struct {
		vs   string
		want timing
	}{
		{"http", timing{"http", sec(10), sec(31), sec(2), true, 0, 0, "GET /health HTTP/1.0\r\n\r\n", "200 OK", false, netip.AddrPort{}}},
		{"child", timing{"http", sec(10), sec(31), sec(2), false, 0, 0, "GET /health HTTP/1.0\r\n\r\n", "200 OK", true, netip.AddrPort{}}},
		{"udp", timing{"udp", sec(30), sec(120), sec(5), true, 2, sec(3), "ping", "pong", false, netip.AddrPortFrom(netip.Addr{}, 5353)}},
		{"half", timing{"tcp-half-open", sec(30), sec(120), sec(5), true, 3, sec(1), "", "", false, netip.MustParseAddrPort("127.16.142.9:22")}},
		{"icmp", timing{"gateway-icmp", sec(30), sec(120), sec(5), true, 3, sec(1), "", "", false, netip.AddrPort{}}},
		{"builtin", timing{"http", sec(30), sec(120), sec(5), true, 0, 0, "GET /\r\n", "", false, netip.AddrPort{}}},
		// An ltm monitor keeps the LTM's timing.
		{"ltm", timing{"http", sec(7), sec(22), 0, false, 0, 0, "", "", false, netip.AddrPort{}}},
		// bigip is the status iQuery reports; a bad probe-timeout is kept, not run.
		{"bigip", timing{}},
		{"bad", timing{}},
	} {
		if got := of(vs[tc.vs]); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.vs, got, tc.want)
		}
	}
	if tl := vs["https"].Spec.TLS; tl == nil || tl.Ciphers != "ECDHE-RSA-AES128-GCM-SHA256" || !tl.Strict || vs["https"].Spec.Type != "https" {
		t.Errorf("https monitor TLS %+v: want its cipherlist, compatibility disabled", tl)
	}
	if !strings.Contains(strings.Join(kept, "\n"), `probe-timeout "0" is not a number from 1; not run by the GSLB`) {
		t.Errorf("kept %q: the bad probe-timeout must be said", kept)
	}
}
