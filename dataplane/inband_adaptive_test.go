package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// startPacedServer is a member that answers each line with "LABEL
// Response" after the delay delay holds at the time, so a test can slow
// it down.
func startPacedServer(t *testing.T, addr, label string, delay *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					time.Sleep(time.Duration(delay.Load()))
					fmt.Fprintf(c, "%s Response\n", label)
				}
			}()
		}
	}()
}

// TestInbandAdaptiveSlowMember: an inband monitor with adaptive settings
// (and no response-time) marks down a member whose answers slow down
// against the baseline of its own earlier answers (absolute or relative
// divergence), or pass adaptive-limit, through a standard virtual with
// real clients; the fast member then takes every client. A member slow
// from the start has no baseline to diverge from and stays up. The
// margins (a slow answer 600 ms against a divergence of 250 ms; a
// relative divergence of members answering in 50 ms) are wide so that a
// loaded machine's delays cannot make the quick answers slow.
func TestInbandAdaptiveSlowMember(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name       string
		prefix     string
		base, slow time.Duration
		// fast is the other member's pace: a relative divergence of a
		// mean near 0 would count a loaded machine's jitter.
		fast     time.Duration
		adaptive AdaptiveMonitor
		down     bool
	}{
		{name: "absolute", prefix: "127.58.5", base: 20 * ms, slow: 600 * ms, down: true,
			adaptive: AdaptiveMonitor{Divergence: 250, Limit: 10 * time.Second, Timespan: 5 * time.Minute}},
		{name: "relative", prefix: "127.58.6", base: 50 * ms, slow: 600 * ms, fast: 50 * ms, down: true,
			adaptive: AdaptiveMonitor{Relative: true, Divergence: 400, Limit: 10 * time.Second, Timespan: 5 * time.Minute}},
		{name: "limit", prefix: "127.58.7", base: 0, slow: 600 * ms, down: true,
			adaptive: AdaptiveMonitor{Divergence: 100000, Limit: 300 * ms, Timespan: 5 * time.Minute}},
		{name: "slow from the start", prefix: "127.58.8", base: 300 * ms, slow: 300 * ms,
			adaptive: AdaptiveMonitor{Divergence: 250, Limit: 10 * time.Second, Timespan: 5 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, pacedAddr, fastAddr := tc.prefix+".10:9000", tc.prefix+".11:9000", tc.prefix+".12:9000"
			var delay atomic.Int64
			delay.Store(int64(tc.base))
			startPacedServer(t, pacedAddr, "PACED", &delay)
			var fast atomic.Int64
			fast.Store(int64(tc.fast))
			startPacedServer(t, fastAddr, "FAST", &fast)
			p, _ := newPlane(t)
			a := tc.adaptive
			cfg := basic(vs, pacedAddr, fastAddr)
			cfg.Monitors["/Common/inb"] = &Monitor{Name: "/Common/inb", Type: MonitorInband, Adaptive: &a,
				Inband: &InbandMonitor{Failures: 2, FailureInterval: 30 * time.Second, RetryTime: time.Minute}}
			cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/inb"}}
			mustApply(t, p, cfg)
			paced := func() string { return memberStat(t, p, "/Common/pool", "/Common/"+pacedAddr).MonitorStatus }

			// The baseline: round robin gives the paced member three.
			for i := 0; i < 6; i++ {
				if got := once(t, vs); got != "PACED Response" && got != "FAST Response" {
					t.Fatalf("client %d: %q", i, got)
				}
			}
			if s := paced(); s != "up" {
				t.Fatalf("at its usual pace the member is %s", s)
			}
			delay.Store(int64(tc.slow))
			slow := 0
			for i := 0; i < 8 && paced() == "up"; i++ {
				switch got := once(t, vs); got {
				case "PACED Response":
					slow++
				case "FAST Response":
				default:
					t.Fatalf("client %d: %q", i, got)
				}
			}
			if !tc.down {
				if s := paced(); s != "up" || slow != 4 {
					t.Fatalf("a member slow from the start is %s after %d answers; want up after 4", s, slow)
				}
				return
			}
			if s := paced(); s != "down" || slow < 1 || slow > 2 {
				t.Fatalf("after %d slow answers the member is %s; want down after 2", slow, s)
			}
			for i := 0; i < 4; i++ {
				if got := once(t, vs); got != "FAST Response" {
					t.Fatalf("with the slow member down, client %d: %q", i, got)
				}
			}
		})
	}
}
