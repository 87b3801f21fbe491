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
