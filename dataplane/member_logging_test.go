package dataplane

import (
	"strings"
	"testing"
	"time"
)

// TestMemberLoggingTraces: a pool member's `logging enabled` traces every
// probe of the member's monitors (not the node's), and turning it off
// stops the lines without restarting the probes.
func TestMemberLoggingTraces(t *testing.T) {
	startUDPMember(t, "127.11.7.12:5300", "S1")
	p, lg := newPlane(t)
	apply := func(logging bool) {
		cfg := udpBasic("127.11.7.11:53", "127.11.7.12:5300")
		cfg.Monitors["/Common/udp_node"] = &Monitor{Name: "/Common/udp_node", Type: MonitorUDP,
			Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "node", Recv: "^S1:", Destination: ap("0.0.0.0:5300")}
		cfg.Monitors["/Common/udp_member"] = &Monitor{Name: "/Common/udp_member", Type: MonitorUDP,
			Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "member", Recv: "^S1:"}
		cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/udp_member"}}
		cfg.Pools["/Common/pool"].Members[0].Logging = logging
		cfg.Nodes = map[string]*Node{"/Common/127.11.7.12": {Name: "/Common/127.11.7.12", Addr: ap("127.11.7.12:0").Addr(),
			Monitor: &MonitorRule{Names: []string{"/Common/udp_node"}}}}
		if err := p.Apply(nil, cfg); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	line := `Monitor /Common/udp_member 127.11.7.12:5300 (udp): sent \"member\"; received \"S1:member\"; up`
	apply(true)
	eventually(t, "the member's probe lines", func() bool { return strings.Count(lg.String(), line) >= 2 })
	if strings.Contains(lg.String(), "Monitor /Common/udp_node") {
		t.Errorf("the node's monitor is traced:\n%s", lg)
	}
	apply(false)
	time.Sleep(100 * time.Millisecond) // a probe under way may still log
	before := strings.Count(lg.String(), line)
	time.Sleep(200 * time.Millisecond) // four probe intervals
	if after := strings.Count(lg.String(), line); after != before {
		t.Errorf("%d probe lines after logging was disabled", after-before)
	}
	if n := strings.Count(lg.String(), "monitor status up"); n != 2 {
		t.Errorf("%d status lines, want the node's and the member's first:\n%s", n, lg)
	}
}
