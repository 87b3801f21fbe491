package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestTCPSocketSettingsTranslated: the tcp profile's keep-alive, MSS,
// SYN retry, FIN-WAIT-2, TTL, DF, ToS and listener settings and the
// fastl4 profile's reach the sides of the virtual; defaults cost nothing
// (nil sides); out-of-range values are refused and change nothing.
func TestTCPSocketSettingsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.3.9.11:80 }",
		"create ltm profile tcp k keep-alive-interval 75 max-segment-size 1200 syn-max-retrans 2 fin-wait-2-timeout 30 ip-ttl-mode set ip-ttl-v4 17 ip-ttl-v6 33 ip-df-mode clear",
		"create ltm profile tcp l deferred-accept enabled fast-open enabled ip-tos-to-client 184 keep-alive-interval 0 max-segment-size 40",
		"create ltm profile tcp d ip-ttl-mode decrement ip-ttl-v4 9",
		"create ltm profile fastl4 f keep-alive-interval 20 mss-override 1300 ip-tos-to-client 8 ip-tos-to-server 16 ip-df-mode set receive-window-size 70000 tcp-handshake-timeout 2",
		"create ltm profile fastl4 g keep-alive-interval disabled",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not act") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	k := &dataplane.TCPSide{KeepAlive: 75, MaxSeg: 1200, SynRetries: 2, Linger2: 30, TTL: 17, TTL6: 33, DF: dataplane.DFClear}
	l := &dataplane.TCPSide{KeepAliveOff: true, MaxSeg: 88, DeferAccept: 10, FastOpen: 1024, TOS: 184, SetTOS: true}
	lServer := &dataplane.TCPSide{KeepAliveOff: true, MaxSeg: 88}
	f := dataplane.TCPSide{KeepAlive: 20, MaxSeg: 1300, DF: dataplane.DFSet, RecvBuffer: 70000}
	fc, fs := f, f
	fc.TOS, fc.SetTOS = 8, true
	fs.TOS, fs.SetTOS, fs.ConnectTimeout = 16, true, 2*time.Second
	for _, c := range []struct {
		name, profiles string
		client, server *dataplane.TCPSide
	}{
		{"defaults", "tcp", nil, nil},
		{"fastl4 defaults", "fastL4", nil, nil},
		{"all", "k", k, k},
		{"listener side", "l { context clientside } tcp { context serverside }", l, nil},
		{"listener settings stay client side", "tcp { context clientside } l { context serverside }", nil, lServer},
		{"decrement kept as proxy", "d", nil, nil},
		{"fastl4", "f", &fc, &fs},
		{"fastl4 keep-alive disabled", "g", &dataplane.TCPSide{KeepAliveOff: true}, &dataplane.TCPSide{KeepAliveOff: true}},
	} {
		run(t, s, "delete ltm virtual v")
		if out, err := run(t, s, "create ltm virtual v destination 127.3.9.1:80 pool p profiles replace-all-with { "+c.profiles+" }"); err != "" {
			t.Fatalf("%s: %s %s", c.name, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.name, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if !sameSide(v.ClientTCP, c.client) || !sameSide(v.ServerTCP, c.server) {
			t.Errorf("%s: client %+v server %+v; want %+v %+v", c.name, v.ClientTCP, v.ServerTCP, c.client, c.server)
		}
	}
	for _, bad := range []string{
		"modify ltm profile tcp k keep-alive-interval 40000",
		"modify ltm profile tcp k max-segment-size 70000",
		"modify ltm profile tcp k syn-max-retrans 128",
		"modify ltm profile tcp k ip-ttl-v4 256",
		"modify ltm profile tcp k ip-ttl-v6 300",
		"modify ltm profile tcp k ip-ttl-mode sometimes",
		"modify ltm profile tcp k ip-df-mode maybe",
		"modify ltm profile tcp k ip-tos-to-client 999",
		"modify ltm profile tcp k deferred-accept perhaps",
		"modify ltm profile fastl4 f keep-alive-interval often",
		"modify ltm profile fastl4 f keep-alive-interval 99999",
		"modify ltm profile fastl4 f ip-tos-to-server -3",
		"modify ltm profile fastl4 f receive-window-size 2000000000",
	} {
		before := e.Config()
		if _, err := run(t, s, bad); err == "" {
			t.Errorf("%s accepted", bad)
		} else if !strings.Contains(err, "is not a valid value") && !strings.Contains(err, "out of range") {
			t.Errorf("%s: %s", bad, err)
		}
		if e.Config() != before {
			t.Errorf("%s changed the configuration", bad)
		}
	}
}

// TestTCPIPModeWarnings: ip-ttl-mode preserve or decrement and ip-df-mode
// preserve, which a socket proxy cannot follow, are warned of at the
// commit that asks for them.
func TestTCPIPModeWarnings(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, warn string }{
		{"create ltm pool p members add { 127.3.9.21:80 }", ""},
		{"create ltm profile tcp w ip-ttl-mode preserve", ""},
		{"create ltm virtual v destination 127.3.9.2:80 pool p profiles add { w }", "ip-ttl-mode preserve is kept and acted on as proxy"},
		{"modify ltm profile tcp w ip-df-mode preserve", "ip-df-mode preserve is kept and acted on as pmtu"},
		{"create ltm profile fastl4 f4 ip-ttl-mode decrement", ""},
		{"create ltm virtual v4 destination 127.3.9.3:80 pool p profiles add { f4 }", "ltm profile fastl4 /Common/f4: ip-ttl-mode decrement is kept and acted on as proxy"},
	} {
		out, err := run(t, s, c.cmd)
		if err != "" {
			t.Fatalf("%s: %s", c.cmd, err)
		}
		if c.warn == "" && strings.Contains(out, "acted on as") || c.warn != "" && !strings.Contains(out, c.warn) {
			t.Errorf("%s: output %q, want warning %q", c.cmd, out, c.warn)
		}
	}
}

// TestUDPSocketSettingsTranslated: the udp profile's TTL, DF, send
// buffer and checksum settings reach both sides, ip-tos-to-client the
// client's; defaults cost nothing; bad values are refused.
func TestUDPSocketSettingsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.3.9.31:53 }",
		"create ltm profile udp u ip-tos-to-client 32 ip-ttl-mode set ip-ttl-v4 17 ip-df-mode clear send-buffer-size 100000 no-checksum enabled",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not act") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	both := dataplane.TCPSide{TTL: 17, TTL6: 64, DF: dataplane.DFClear, SendBuffer: 100000, NoChecksum: true}
	client := both
	client.TOS, client.SetTOS = 32, true
	for _, c := range []struct {
		name, profiles string
		client, server *dataplane.TCPSide
	}{
		{"defaults", "udp", nil, nil},
		{"set", "u", &client, &both},
	} {
		run(t, s, "delete ltm virtual v")
		if out, err := run(t, s, "create ltm virtual v destination 127.3.9.4:53 ip-protocol udp pool p profiles replace-all-with { "+c.profiles+" }"); err != "" {
			t.Fatalf("%s: %s %s", c.name, out, err)
		}
		dc, _ := Translate(e.schema, e.Config())
		v := dc.Virtuals["/Common/v"]
		if v == nil || !sameSide(v.ClientTCP, c.client) || !sameSide(v.ServerTCP, c.server) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
	for _, bad := range []string{
		"modify ltm profile udp u ip-ttl-v4 256",
		"modify ltm profile udp u ip-tos-to-client 300",
		"modify ltm profile udp u no-checksum maybe",
		"modify ltm profile udp u send-buffer-size 2000000000",
	} {
		before := e.Config()
		if _, err := run(t, s, bad); err == "" {
			t.Errorf("%s accepted", bad)
		}
		if e.Config() != before {
			t.Errorf("%s changed the configuration", bad)
		}
	}
}
