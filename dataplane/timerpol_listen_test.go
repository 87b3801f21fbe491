package dataplane

import (
	"strings"
	"testing"
	"time"
)

// TestTimerPolicyListen: the TCP connection a rule's listen accepts is a
// flow of the virtual that ran the rule, so it takes that virtual's timer
// policy, matched on the port the peer reached on the listener [M]: the
// control connection (the virtual's port) gets its rule's 30 s, the
// related data connection (the listener's ephemeral port) the 7 s of
// the rule for tcp on any port.
func TestTimerPolicyListen(t *testing.T) {
	startServer(t, "127.196.20.2:30121", "C")
	startServer(t, "127.196.20.3:30122", "D")
	p, _ := newPlane(t)
	cfg := basic("127.196.20.1:30121", "127.196.20.2:30121")
	v := cfg.Virtuals["/Common/vs"]
	v.Rules, _ = compileRules(t, strings.NewReplacer("127.152.1.3 2000", "127.196.20.3 30122", "%TIMEOUT%", "30").Replace(listenRule))
	v.Timers = &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{
		{Name: "control", Proto: 6, Ports: []TimerPorts{{Lo: 30121, Hi: 30121}}, Idle: 30 * time.Second},
		{Name: "tcp", Proto: 6, Idle: 7 * time.Second},
	}}
	mustApply(t, p, cfg)
	ctl := dialVS(t, "127.196.20.1:30121")
	data := dataAddr(t, ctl)
	dc := dialVS(t, data)
	if got := dc.mustAsk("list"); got != "D Response" {
		t.Fatalf("data connection: %q, want the rule's server", got)
	}
	var ctlIdle, dataIdle time.Duration
	for _, r := range flowsOf(p, "/Common/vs") {
		switch r.SSServer {
		case ap("127.196.20.3:30122"):
			dataIdle = r.IdleTimeout
		case ap("127.196.20.2:30121"):
			ctlIdle = r.IdleTimeout
		}
	}
	if ctlIdle != 30*time.Second || dataIdle != 7*time.Second {
		t.Errorf("idle timeouts: control %v, data %v; want 30s and 7s", ctlIdle, dataIdle)
	}
}
