package dataplane

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"testing"
	"time"
)

// timerTestPolicy gives the virtual's first port a one-second idle
// timeout, its second thirty seconds, and leaves its third the
// profile's (unspecified), for protocol proto.
func timerTestPolicy(proto int, first uint16) *TimerPolicy {
	return &TimerPolicy{Name: "/Common/tp", Rules: []TimerRule{
		{Name: "short", Proto: proto, Ports: []TimerPorts{{Lo: first, Hi: first}}, Idle: time.Second},
		{Name: "long", Proto: proto, Ports: []TimerPorts{{Lo: first + 1, Hi: first + 1}}, Idle: 30 * time.Second},
		{Name: "profile", Proto: proto, Ports: []TimerPorts{{Lo: first + 2, Hi: first + 2}}, Unspecified: true},
		{Name: "other-protocol", Proto: 17 + 6 - proto, Idle: time.Second},
	}}
}

// flowIdle is the idle timeout the connection table shows for the
// virtual's client flow from the client at from, and how many there are.
func flowIdle(p *Plane, from netip.AddrPort) (time.Duration, int) {
	var idle time.Duration
	n := p.Connections(ConnFilter{CSClientAddr: from.Addr(), CSClientPort: from.Port(), Virtual: "/Common/vs"}, func(c *Connection) bool {
		idle = c.IdleTimeout
		return true
	})
	return idle, n
}

// TestTimerPolicyTCP: a virtual on three ports whose service-policy's
// timer policy gives port 30310 one second and 30311 thirty: on each
// engine (event loops, goroutines, message-based balancing), the client
// of 30310 is closed once idle for at least a second while the client of
// 30311 still gets answers, and the connection table shows each flow's
// own idle timeout (the tcp profile's, 120 s here, for the unspecified
// rule's port).
func TestTimerPolicyTCP(t *testing.T) {
	paths := tcpOptsPaths(t)
	names := make([]string, 0, len(paths))
	for n := range paths {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			vsIP := fmt.Sprintf("127.195.1.%d", i+1)
			member := fmt.Sprintf("127.195.2.%d:30300", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsIP+":30310", member)
			v := cfg.Virtuals["/Common/vs"]
			v.PortRanges = []PortRange{{Low: 30310, High: 30312}}
			v.TranslatePort = true
			v.IdleTimeout = 120 * time.Second
			v.Timers = timerTestPolicy(6, 30310)
			paths[name](v)
			mustApply(t, p, cfg)

			short, long, prof := dialVS(t, vsIP+":30310"), dialVS(t, vsIP+":30311"), dialVS(t, vsIP+":30312")
			// asked is before the short client's last byte: its flow was
			// last active after it.
			asked := time.Now()
			for _, c := range []*client{short, long, prof} {
				if got := c.mustAsk("hello"); got != "S1 Response" {
					t.Fatalf("answer %q", got)
				}
			}
			for c, want := range map[*client]time.Duration{short: time.Second, long: 30 * time.Second, prof: 120 * time.Second} {
				from := c.c.LocalAddr().(*net.TCPAddr).AddrPort()
				// The one-second flow may be gone already on a slow machine.
				if idle, n := flowIdle(p, from); (n != 1 || idle != want) && !(c == short && n == 0) {
					t.Errorf("to %v: %d flows, idle timeout %v; want one of %v", c.c.RemoteAddr(), n, idle, want)
				}
			}
			// The short one ends: its client reads a reset or EOF within
			// a bounded wait, never before its second is up.
			short.c.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err := short.r.ReadByte()
			var ne net.Error
			if err == nil || errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the one-second client is still open after 20 s idle (%v)", err)
			}
			// The http engine stamps a client's activity with its
			// janitor's clock, as fine as its tick, a quarter of the
			// client's idle timeout (dataplane/mblb engine.go,
			// session.go): the stamp may be up to a tick older than
			// the last byte, so the close may come that much early.
			if d := time.Since(asked); d < 750*time.Millisecond {
				t.Errorf("the one-second client closed after %v idle", d)
			}
			if got := long.mustAsk("still"); got != "S1 Response" {
				t.Fatalf("the thirty-second client: %q", got)
			}
			if got := prof.mustAsk("still"); got != "S1 Response" {
				t.Fatalf("the profile's client: %q", got)
			}
		})
	}
}

// TestTimerPolicyUDP: the same policy for UDP on a UDP virtual: the flow
// of port 30320 leaves the connection table once idle for at least a
// second, the flow of 30321 stays (and is still answered on the member
// it was balanced to), and each shows its own idle timeout.
func TestTimerPolicyUDP(t *testing.T) {
	startUDPMember(t, "127.195.3.2:30300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.195.3.1:30320", "127.195.3.2:30300")
	v := cfg.Virtuals["/Common/vs"]
	v.PortRanges = []PortRange{{Low: 30320, High: 30322}}
	v.IdleTimeout = 120 * time.Second
	v.Timers = timerTestPolicy(17, 30320)
	mustApply(t, p, cfg)

	short, long, prof := dialUDP(t, "", "127.195.3.1:30320"), dialUDP(t, "", "127.195.3.1:30321"), dialUDP(t, "", "127.195.3.1:30322")
	asked := time.Now() // before the short flow's last datagram
	for _, c := range []*udpClient{short, long, prof} {
		if got := c.mustAsk("q"); got != "S1:q" {
			t.Fatalf("answer %q", got)
		}
	}
	for c, want := range map[*udpClient]time.Duration{short: time.Second, long: 30 * time.Second, prof: 120 * time.Second} {
		if idle, n := flowIdle(p, c.local()); (n != 1 || idle != want) && !(c == short && n == 0) {
			t.Errorf("to %v: %d flows, idle timeout %v; want one of %v", c.c.RemoteAddr(), n, idle, want)
		}
	}
	eventually(t, "the one-second flow to end", func() bool { _, n := flowIdle(p, short.local()); return n == 0 })
	if d := time.Since(asked); d < time.Second {
		t.Errorf("the one-second flow ended after %v idle", d)
	}
	if _, n := flowIdle(p, long.local()); n != 1 {
		t.Fatalf("the thirty-second flow: %d flows", n)
	}
	if got := long.mustAsk("again"); got != "S1:again" {
		t.Fatalf("the thirty-second flow: %q", got)
	}
	if _, n := flowIdle(p, long.local()); n != 1 {
		t.Errorf("the thirty-second flow was replaced: %d flows", n)
	}
}

// TestTimerPolicyNone: without a timer policy a flow keeps the profile's
// idle timeout on every port.
func TestTimerPolicyNone(t *testing.T) {
	startServer(t, "127.195.4.2:30300", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.195.4.1:30330", "127.195.4.2:30300")
	cfg.Virtuals["/Common/vs"].IdleTimeout = 10 * time.Second
	mustApply(t, p, cfg)
	c := dialVS(t, "127.195.4.1:30330")
	c.mustAsk("hello")
	if idle, n := flowIdle(p, c.c.LocalAddr().(*net.TCPAddr).AddrPort()); n != 1 || idle != 10*time.Second {
		t.Errorf("%d flows, idle timeout %v; want one of 10s", n, idle)
	}
}
