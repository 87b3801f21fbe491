package dataplane

import (
	"strings"
	"testing"
	"time"
)

// TestMonitorDebugLogged: a udp monitor with debug on a pool writes each
// probe of each member to the plane's log (what it sent, what came back,
// the verdict); the same monitor without debug writes none.
func TestMonitorDebugLogged(t *testing.T) {
	startUDPMember(t, "127.17.8.2:5300", "S1")
	for _, c := range []struct {
		name  string
		debug bool
	}{{"debug", true}, {"no debug", false}} {
		t.Run(c.name, func(t *testing.T) {
			p, lg := newPlane(t)
			cfg := udpBasic("127.17.8.1:53", "127.17.8.2:5300")
			cfg.Monitors["/Common/udp_dbg"] = &Monitor{Name: "/Common/udp_dbg", Type: MonitorUDP,
				Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "health", Recv: "^S1:", Debug: c.debug}
			cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/udp_dbg"}}
			mustApply(t, p, cfg)
			eventually(t, "the member up", func() bool {
				return memberStat(t, p, "/Common/pool", "/Common/127.17.8.2:5300").MonitorStatus == "up"
			})
			want := `Monitor /Common/udp_dbg 127.17.8.2:5300 (udp): sent \"health\"; received \"S1:health\"; up`
			if c.debug {
				eventually(t, "the probe's line in the log", func() bool { return strings.Contains(lg.String(), want) })
			} else if strings.Contains(lg.String(), "Monitor /Common/udp_dbg") {
				t.Errorf("probe lines without debug:\n%s", lg)
			}
		})
	}
}

// TestNodeLoggingTraces: a node with logging enabled writes every probe
// of its monitor (a udp monitor without debug) to the log; turning it
// off stops the lines, and its members' monitors are not traced.
func TestNodeLoggingTraces(t *testing.T) {
	startUDPMember(t, "127.17.8.12:5300", "S1")
	p, lg := newPlane(t)
	apply := func(logging bool) {
		cfg := udpBasic("127.17.8.11:53", "127.17.8.12:5300")
		cfg.Monitors["/Common/udp_node"] = &Monitor{Name: "/Common/udp_node", Type: MonitorUDP,
			Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "node", Recv: "^S1:", Destination: ap("0.0.0.0:5300")}
		cfg.Monitors["/Common/udp_member"] = &Monitor{Name: "/Common/udp_member", Type: MonitorUDP,
			Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "member", Recv: "^S1:"}
		cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/udp_member"}}
		cfg.Nodes = map[string]*Node{"/Common/127.17.8.12": {Name: "/Common/127.17.8.12", Addr: ap("127.17.8.12:0").Addr(),
			Monitor: &MonitorRule{Names: []string{"/Common/udp_node"}}, Logging: logging}}
		if err := p.Apply(nil, cfg); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	line := `Monitor /Common/udp_node 127.17.8.12:5300 (udp): sent \"node\"; received \"S1:node\"; up`
	apply(true)
	eventually(t, "the node's probe lines", func() bool { return strings.Count(lg.String(), line) >= 2 })
	if strings.Contains(lg.String(), "Monitor /Common/udp_member") {
		t.Errorf("the member's monitor is traced:\n%s", lg)
	}
	apply(false)
	// The instance goes on without a trace: after a probe it may have
	// had under way, no line is added in four intervals.
	time.Sleep(100 * time.Millisecond)
	before := strings.Count(lg.String(), line)
	time.Sleep(200 * time.Millisecond) // four probe intervals
	if after := strings.Count(lg.String(), line); after != before {
		t.Errorf("%d probe lines after logging was disabled", after-before)
	}
	// The node's state was kept: no status line since it came up.
	if n := strings.Count(lg.String(), "monitor status up"); n != 2 {
		t.Errorf("%d status lines, want the node's and the member's first:\n%s", n, lg)
	}
}
