package dataplane

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
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
	// The control connection's server side is opened after its rule ran:
	// an answer on it is what shows it in the connection table.
	if got := ctl.mustAsk("hello"); got != "C Response" {
		t.Fatalf("control connection: %q, want the pool's member", got)
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

// TestTimerPolicyListenUDP: the UDP relay a rule's listen opens is a flow
// of the virtual that ran the rule, so it takes that virtual's timer
// policy's rule for udp and the port the peer reached on the listener
// [M], on a TCP virtual (whose relays otherwise idle out in 60 s) and on
// a UDP virtual (otherwise its udp profile's); a one-second rule ends
// the relay itself, indefinite keeps it, without a policy the default
// stays. The relay's server is a real UDP service.
func TestTimerPolicyListenUDP(t *testing.T) {
	udpRule := func(port uint16) TimerRule {
		return TimerRule{Name: "relay", Proto: 17, Ports: []TimerPorts{{Lo: port, Hi: port}}, Idle: time.Second}
	}
	for i, c := range []struct {
		name     string
		udpVS    bool
		timers   func(listen uint16) *TimerPolicy
		wantIdle time.Duration // 0: indefinite
		ends     bool          // the relay ends itself within the test
	}{
		{"tcp virtual, the listener port's rule", false, func(l uint16) *TimerPolicy {
			return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{udpRule(l), {Name: "udp", Proto: 17, Idle: 45 * time.Second}}}
		}, time.Second, true},
		{"tcp virtual, udp's rule", false, func(uint16) *TimerPolicy {
			return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{{Name: "udp", Proto: 17, Idle: 45 * time.Second}}}
		}, 45 * time.Second, false},
		{"tcp virtual, indefinite", false, func(uint16) *TimerPolicy {
			return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{{Name: "udp", Proto: 17}}}
		}, 0, false},
		{"tcp virtual, unspecified", false, func(uint16) *TimerPolicy {
			return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{{Name: "udp", Proto: 17, Unspecified: true}}}
		}, 60 * time.Second, false},
		{"tcp virtual, no policy", false, func(uint16) *TimerPolicy { return nil }, 60 * time.Second, false},
		{"udp virtual, the listener port's rule", true, func(l uint16) *TimerPolicy {
			return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{udpRule(l)}}
		}, time.Second, true},
		{"udp virtual, no policy", true, func(uint16) *TimerPolicy { return nil }, 5 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := 30200 + 10*i
			vsAddr, member, server := fmt.Sprintf("127.205.4.1:%d", base), fmt.Sprintf("127.205.4.2:%d", base), fmt.Sprintf("127.205.4.3:%d", base+1)
			listen := uint16(base + 2)
			startUDPMember(t, server, "R")
			p, _ := newPlane(t)
			var cfg *Config
			rule := fmt.Sprintf(`when CLIENT_ACCEPTED {
    set l [listen { proto 17; timeout 30; bind %d; server 127.205.4.3 %d; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`, listen, base+1)
			if c.udpVS {
				startUDPMember(t, member, "M")
				cfg = udpBasic(vsAddr, member)
				cfg.Virtuals["/Common/vs"].IdleTimeout = 5 * time.Second
				rule = fmt.Sprintf(`when CLIENT_DATA {
    set l [listen { proto 17; bind %d; server 127.205.4.3 %d; allow [IP::client_addr] }]
    UDP::respond "DATA [lindex $l 0] [lindex $l 1]"
    UDP::drop
}`, listen, base+1)
			} else {
				startServer(t, member, "C")
				cfg = basic(vsAddr, member)
			}
			v := cfg.Virtuals["/Common/vs"]
			v.Rules, _ = compileRules(t, rule)
			v.Timers = c.timers(listen)
			mustApply(t, p, cfg)
			var data string
			if c.udpVS {
				f := strings.Fields(dialUDP(t, "127.205.4.9:0", vsAddr).mustAsk("open"))
				if len(f) != 3 {
					t.Fatalf("rule's answer %q", f)
				}
				data = net.JoinHostPort(f[1], f[2])
			} else {
				data = dataAddr(t, dialFrom(t, "127.205.4.9", vsAddr))
			}
			if want := fmt.Sprintf("127.205.4.1:%d", listen); data != want {
				t.Fatalf("listener at %s, want %s", data, want)
			}
			if got := dialUDP(t, "127.205.4.9:0", data).mustAsk("hello"); got != "R:hello" {
				t.Fatalf("relayed datagram: %q, want the rule's server's answer", got)
			}
			relay := func() *flows.Record {
				for _, r := range flowsOf(p, "/Common/vs") {
					if r.SSServer == ap(server) {
						return &r
					}
				}
				return nil
			}
			r := relay()
			if r == nil {
				t.Fatal("the relay is not in the connection table")
			}
			if r.IdleTimeout != c.wantIdle {
				t.Errorf("relay idle timeout %v, want %v", r.IdleTimeout, c.wantIdle)
			}
			if c.ends {
				eventually(t, "the idle relay to end", func() bool { return relay() == nil })
			}
		})
	}
}
