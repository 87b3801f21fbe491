package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestTCPProfileOptionsTranslated: the tcp profile's socket settings
// reach each side of the virtual as its profiles' context says, the
// default pool's ip-tos-to-client joins the client side, a pool's
// ip-tos-to-server its pool; settings left at their defaults cost
// nothing (nil sides); bad values are refused where they are typed.
func TestTCPProfileOptionsTranslated(t *testing.T) {
	defer func(f func() map[string]bool) { congestionAvailable = f }(congestionAvailable)
	congestionAvailable = func() map[string]bool { return map[string]bool{"reno": true, "cubic": true, "bbr": true} }
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.71.9.11:80 }",
		"create ltm profile tcp t1 nagle enabled delayed-acks disabled send-buffer-size 32768 receive-window-size 131072 congestion-control cubic",
		"create ltm profile tcp t2 defaults-from t1 congestion-control new-reno nagle auto reset-on-timeout disabled",
		"create ltm profile tcp t3 idle-timeout 30",
		"create ltm profile fastl4 f4 reset-on-timeout disabled",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not act") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	t1 := &dataplane.TCPSide{Nagle: true, QuickAck: true, SendBuffer: 32768, RecvBuffer: 131072, Congestion: "cubic"}
	t2 := &dataplane.TCPSide{QuickAck: true, SendBuffer: 32768, RecvBuffer: 131072, Congestion: "reno"}
	for _, c := range []struct {
		name, profiles, pool string
		client, server       *dataplane.TCPSide
		fin                  bool
		tosServer            dataplane.TOS
	}{
		{name: "defaults", profiles: "tcp", client: nil, server: nil},
		{name: "unchanged child", profiles: "t3", client: nil, server: nil},
		{name: "all", profiles: "t1", client: t1, server: t1},
		{name: "per side", profiles: "t1 { context clientside } t2 { context serverside }", client: t1, server: t2},
		{name: "serverside alone", profiles: "t2 { context serverside }", client: t2, server: t2, fin: true},
		{name: "fastl4", profiles: "f4", client: nil, server: nil, fin: true},
		{name: "tos", profiles: "tcp", pool: "ip-tos-to-client 16 ip-tos-to-server 40",
			client: &dataplane.TCPSide{TOS: 16, SetTOS: true}, server: nil, tosServer: dataplane.TOS{Value: 40, Set: true}},
		{name: "pass-through", profiles: "tcp", pool: "ip-tos-to-client pass-through ip-tos-to-server pass-through"},
	} {
		run(t, s, "delete ltm virtual v")
		if c.pool != "" {
			if out, err := run(t, s, "modify ltm pool p "+c.pool); err != "" {
				t.Fatalf("%s: %s %s", c.name, out, err)
			}
		}
		cmd := "create ltm virtual v destination 127.71.9.1:80 pool p profiles replace-all-with { " + c.profiles + " }"
		if out, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s %s", c.name, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.name, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if !sameSide(v.ClientTCP, c.client) || !sameSide(v.ServerTCP, c.server) || v.IdleFIN != c.fin {
			t.Errorf("%s: client %+v server %+v fin %v; want %+v %+v %v", c.name, v.ClientTCP, v.ServerTCP, v.IdleFIN, c.client, c.server, c.fin)
		}
		if got := dc.Pools["/Common/p"].ToSServer; got != c.tosServer {
			t.Errorf("%s: ip-tos-to-server %+v, want %+v", c.name, got, c.tosServer)
		}
	}
	for _, bad := range []string{
		"modify ltm pool p ip-tos-to-server 256",
		"modify ltm pool p ip-tos-to-client high",
		"modify ltm pool p ip-tos-to-client -1",
		"modify ltm profile tcp t1 nagle sometimes",
		"modify ltm profile tcp t1 congestion-control fastest",
		"modify ltm profile tcp t1 send-buffer-size -5",
		"modify ltm profile tcp t1 receive-window-size 2000000000",
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

func sameSide(a, b *dataplane.TCPSide) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestTCPCongestionWarnings: a congestion control the kernel lacks, or
// that Linux does not have, is warned of once, at the commit that asks
// for it, naming the algorithm; the flows keep the system's default.
func TestTCPCongestionWarnings(t *testing.T) {
	defer func(f func() map[string]bool) { congestionAvailable = f }(congestionAvailable)
	congestionAvailable = func() map[string]bool { return map[string]bool{"reno": true, "cubic": true} }
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, warn string }{
		{"create ltm pool p members add { 127.71.9.21:80 }", ""},
		{"create ltm profile tcp w congestion-control woodside", ""},
		{"create ltm virtual v destination 127.71.9.2:80 pool p profiles add { w }", "congestion-control woodside has no Linux equivalent"},
		{"modify ltm virtual v description again", ""},
		{"modify ltm profile tcp w congestion-control vegas", "congestion-control vegas needs the kernel's vegas congestion control, which is not loaded"},
		{"modify ltm profile tcp w congestion-control reno", ""},
		{"modify ltm pool p ip-tos-to-server mimic", "ip-tos-to-server mimic is kept and acted on as pass-through"},
	} {
		out, err := run(t, s, c.cmd)
		if err != "" {
			t.Fatalf("%s: %s", c.cmd, err)
		}
		if c.warn == "" && strings.Contains(out, "congestion") || c.warn != "" && !strings.Contains(out, c.warn) {
			t.Errorf("%s: output %q, want warning %q", c.cmd, out, c.warn)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	if v := dc.Virtuals["/Common/v"]; v.ClientTCP == nil || v.ClientTCP.Congestion != "reno" {
		t.Errorf("client side %+v, want reno", v.ClientTCP)
	}
}
