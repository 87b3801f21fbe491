package dataplane

import (
	"fmt"
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

// TestLoggingTraces: a node, or a pool member, with logging enabled
// writes every probe of its own monitors (a udp monitor without debug) to
// the log, and the other's monitor is not traced; turning it off stops
// the lines without restarting the probes (no status line since they
// came up).
func TestLoggingTraces(t *testing.T) {
	for i, c := range []struct {
		name         string
		node, member bool
		traced, not  string // the monitor traced, the one not
	}{
		{"node", true, false, "udp_node", "udp_member"},
		{"member", false, true, "udp_member", "udp_node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs, srv := fmt.Sprintf("127.17.8.%d:53", 11+2*i), fmt.Sprintf("127.17.8.%d", 12+2*i)
			startUDPMember(t, srv+":5300", "S1")
			p, lg := newPlane(t)
			apply := func(on bool) {
				cfg := udpBasic(vs, srv+":5300")
				cfg.Monitors["/Common/udp_node"] = &Monitor{Name: "/Common/udp_node", Type: MonitorUDP,
					Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "udp_node", Recv: "^S1:", Destination: ap("0.0.0.0:5300")}
				cfg.Monitors["/Common/udp_member"] = &Monitor{Name: "/Common/udp_member", Type: MonitorUDP,
					Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "udp_member", Recv: "^S1:"}
				cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/udp_member"}}
				cfg.Pools["/Common/pool"].Members[0].Logging = on && c.member
				cfg.Nodes = map[string]*Node{"/Common/" + srv: {Name: "/Common/" + srv, Addr: ap(srv + ":0").Addr(),
					Monitor: &MonitorRule{Names: []string{"/Common/udp_node"}}, Logging: on && c.node}}
				if err := p.Apply(nil, cfg); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			line := fmt.Sprintf(`Monitor /Common/%s %s:5300 (udp): sent \"%s\"; received \"S1:%s\"; up`, c.traced, srv, c.traced, c.traced)
			apply(true)
			eventually(t, "the probe lines", func() bool { return strings.Count(lg.String(), line) >= 2 })
			if strings.Contains(lg.String(), "Monitor /Common/"+c.not) {
				t.Errorf("%s is traced:\n%s", c.not, lg)
			}
			apply(false)
			// The probe under way (one at most: an instance probes one at
			// a time) may still log, however late it ends; none after it
			// in six intervals.
			before := strings.Count(lg.String(), line)
			time.Sleep(300 * time.Millisecond)
			if after := strings.Count(lg.String(), line); after > before+1 {
				t.Errorf("%d probe lines after logging was disabled", after-before)
			}
			if n := strings.Count(lg.String(), "monitor status up"); n != 2 {
				t.Errorf("%d status lines, want the node's and the member's first:\n%s", n, lg)
			}
		})
	}
}
