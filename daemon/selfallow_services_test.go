package daemon

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestPCPPortLockdown: the PCP server listens on its selfip only while
// the self IP's allow-service admits udp on the pcp profile's port, as
// iQuery needs tcp:4353; otherwise the pool translates without it and
// the commit warns why.
func TestPCPPortLockdown(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_lock address 127.204.60.1/16 vlan internal",
	)
	out, err := run(t, s, "create ltm lsn-pool lk members add { 127.204.61.0/30 } pcp { profile pcp selfip pcp_lock }")
	if err != "" || !strings.Contains(out, "does not admit udp:5351 (port lockdown), so the PCP server does not listen") {
		t.Fatalf("a locked-down selfip: %q, %q; want a warning", out, err)
	}
	sub := netip.MustParseAddr("127.204.62.6")
	if pcpSilent(t, "127.204.62.6:0", "127.204.60.1:5351") == false {
		t.Error("the PCP server answers on a self IP that allows none")
	}
	for _, allow := range []string{"{ udp:5351 }", "default tcp:22 udp:5351", "all", "{ udp:0 }"} {
		if strings.Contains(allow, "default") {
			allow = "{ " + allow + " }"
		}
		runAll(t, s, "modify net self pcp_lock allow-service "+allow)
		if a := pcpAsk(t, "127.204.62.6:0", "127.204.60.1:5351", pcpReq{version: 2, opcode: 0, client: sub}); a.result != 0 {
			t.Errorf("allow-service %s: ANNOUNCE %+v", allow, a)
		}
	}
	// Defaults (BIG-IP's) do not hold udp:5351; tcp:5351 is not udp.
	for _, allow := range []string{"default", "{ tcp:5351 }"} {
		runAll(t, s, "modify net self pcp_lock allow-service "+allow)
		if !pcpSilent(t, "127.204.62.6:0", "127.204.60.1:5351") {
			t.Errorf("allow-service %s: the PCP server still answers", allow)
		}
	}
}

// pcpSilent reports whether no PCP answer comes from server within three
// tries of a second each.
func pcpSilent(t *testing.T, src, server string) bool {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(src)), net.UDPAddrFromAddrPort(netip.MustParseAddrPort(server)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 1100)
	req := pcpReq{version: 2, opcode: 0, client: netip.MustParseAddrPort(src).Addr()}
	for try := 0; try < 3; try++ {
		c.Write(req.bytes())
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(buf); err == nil {
			return false
		}
	}
	return true
}

// TestHeartbeatPortLockdown: network failover listens on a unicast
// address that is a self IP's only while that self IP admits udp on the
// entry's port; an address of no self IP is not locked down.
func TestHeartbeatPortLockdown(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan ha",
		"create net self ha_self address 127.204.70.1/24 vlan ha",
		"modify cm device bigip1 unicast-address { { ip 127.204.70.1 } { ip 127.204.70.1 port 1027 } { ip 127.204.71.1 } }",
	)
	for _, tc := range []struct {
		allow          string
		listen, locked string
	}{
		{"none", "[127.204.71.1:1026]", "[127.204.70.1:1026 127.204.70.1:1027]"},
		{"default", "[127.204.70.1:1026 127.204.71.1:1026]", "[127.204.70.1:1027]"},
		{"{ udp:1027 }", "[127.204.70.1:1027 127.204.71.1:1026]", "[127.204.70.1:1026]"},
		{"{ tcp:1026 udp:1027 }", "[127.204.70.1:1027 127.204.71.1:1026]", "[127.204.70.1:1026]"},
		{"all", "[127.204.70.1:1026 127.204.70.1:1027 127.204.71.1:1026]", "[]"},
	} {
		runAll(t, s, "modify net self ha_self allow-service "+tc.allow)
		on, locked, err := e.heartbeatAddrs()
		if err != nil || fmt.Sprint(on) != tc.listen || fmt.Sprint(locked) != tc.locked {
			t.Errorf("allow-service %s: heartbeats on %v, locked out %v (%v); want %s and %s", tc.allow, on, locked, err, tc.listen, tc.locked)
		}
	}
}
