package monitor

import (
	"context"
	"net"
	"net/netip"
	"os"
	"regexp"
	"testing"
	"time"
)

// answer listens on addr and writes reply to every connection after reading
// its first bytes (or at once when reply starts the conversation).
func answer(t *testing.T, addr, reply string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 512)
				c.Read(buf)
				c.Write([]byte(reply))
			}()
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String())
}

func closedPort(t *testing.T, addr string) netip.AddrPort {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	return a
}

func TestProbe(t *testing.T) {
	t.Parallel()
	ok := answer(t, "127.10.0.1:0", "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nS1 Response")
	maint := answer(t, "127.10.0.1:0", "HTTP/1.0 503 maintenance\r\n\r\n")
	silent := answer(t, "127.10.0.1:0", "")
	closed := closedPort(t, "127.10.0.1:0")
	re := regexp.MustCompile
	for _, tc := range []struct {
		name     string
		spec     Spec
		target   netip.AddrPort
		up       bool
		disabled bool
	}{
		{"tcp connect only", Spec{Type: TCP}, ok, true, false},
		{"tcp refused", Spec{Type: TCP}, closed, false, false},
		{"tcp recv match", Spec{Type: TCP, Send: "hello\n", Recv: re("S1 Resp")}, ok, true, false},
		{"tcp recv mismatch", Spec{Type: TCP, Send: "hello\n", Recv: re("S2 Resp")}, ok, false, false},
		{"tcp reverse match is down", Spec{Type: TCP, Send: "x", Recv: re("S1"), Reverse: true}, ok, false, false},
		{"http any answer", Spec{Type: HTTP, Send: "GET /\r\n"}, ok, true, false},
		{"http silent", Spec{Type: HTTP, Send: "GET /\r\n"}, silent, false, false},
		{"http recv", Spec{Type: HTTP, Send: "GET / HTTP/1.0\r\n\r\n", Recv: re(`200 OK`)}, ok, true, false},
		{"http recv-disable", Spec{Type: HTTP, Send: "GET /\r\n", Recv: re(`200 OK`), RecvDisable: re(`maintenance`)}, maint, true, true},
		{"http neither", Spec{Type: HTTP, Send: "GET /\r\n", Recv: re(`200 OK`)}, maint, false, false},
		{"half open up", Spec{Type: TCPHalfOpen}, ok, true, false},
		{"half open refused", Spec{Type: TCPHalfOpen}, closed, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			out, err := Probe(ctx, &tc.spec, tc.target)
			if out.Up != tc.up || out.Disabled != tc.disabled {
				t.Fatalf("Probe = %+v (err %v), want up=%v disabled=%v", out, err, tc.up, tc.disabled)
			}
			if !tc.up && err == nil {
				t.Fatalf("a failed probe must say why")
			}
		})
	}
}

func TestProbeICMP(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("gateway-icmp needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	out, err := Probe(ctx, &Spec{Type: GatewayICMP}, netip.MustParseAddrPort("127.10.0.9:0"))
	if err != nil || !out.Up {
		t.Fatalf("echo to loopback: %+v %v", out, err)
	}
}

// recorder collects an instance's state changes.
type recorder struct {
	ch chan State
}

func newRecorder() *recorder   { return &recorder{ch: make(chan State, 64)} }
func (r *recorder) on(s State) { r.ch <- s }

// wait returns the first reported state with the given status.
func (r *recorder) wait(t *testing.T, want Status) State {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-r.ch:
			if s.Status == want {
				return s
			}
		case <-deadline:
			t.Fatalf("no %v state reported", want)
		}
	}
}

// toggler is a listener that can be taken away and brought back on the same
// address.
type toggler struct {
	addr string
	l    net.Listener
}

func (g *toggler) up(t *testing.T) {
	l, err := net.Listen("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	g.l = l
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func (g *toggler) down() { g.l.Close() }

func TestInstanceDownAfterTimeoutAndBack(t *testing.T) {
	t.Parallel()
	g := &toggler{addr: "127.10.1.1:47001"}
	g.up(t)
	defer g.down()
	rec := newRecorder()
	spec := &Spec{Type: TCP, Interval: 20 * time.Millisecond, Timeout: 70 * time.Millisecond}
	in := Start(spec, netip.MustParseAddrPort(g.addr), rec.on)
	defer in.Stop()
	rec.wait(t, Up)
	g.down()
	down := rec.wait(t, Down)
	if down.LastError == "" {
		t.Fatalf("down without a last error")
	}
	g.up(t)
	rec.wait(t, Up)
}

func TestInstanceTimeUntilUp(t *testing.T) {
	t.Parallel()
	g := &toggler{addr: "127.10.1.2:47002"}
	g.up(t)
	defer g.down()
	rec := newRecorder()
	spec := &Spec{Type: TCP, Interval: 20 * time.Millisecond, Timeout: 70 * time.Millisecond, TimeUntilUp: 150 * time.Millisecond}
	start := time.Now()
	in := Start(spec, netip.MustParseAddrPort(g.addr), rec.on)
	defer in.Stop()
	rec.wait(t, Up)
	if time.Since(start) < spec.TimeUntilUp {
		t.Fatalf("up before time-until-up elapsed")
	}
}

func TestInstanceManualResume(t *testing.T) {
	t.Parallel()
	g := &toggler{addr: "127.10.1.3:47003"}
	g.up(t)
	defer g.down()
	rec := newRecorder()
	spec := &Spec{Type: TCP, Interval: 20 * time.Millisecond, Timeout: 70 * time.Millisecond, ManualResume: true}
	in := Start(spec, netip.MustParseAddrPort(g.addr), rec.on)
	defer in.Stop()
	rec.wait(t, Up)
	g.down()
	if s := rec.wait(t, Down); !s.Locked {
		t.Fatalf("manual-resume down is not held: %+v", s)
	}
	g.up(t)
	// Several successful probes must not bring it up.
	time.Sleep(150 * time.Millisecond)
	if s := in.State(); s.Status != Down {
		t.Fatalf("came up without resume: %+v", s)
	}
	in.Resume()
	rec.wait(t, Up)
}

func TestInstanceNeverUpGoesDown(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	spec := &Spec{Type: TCP, Interval: 20 * time.Millisecond, Timeout: 60 * time.Millisecond}
	in := Start(spec, closedPort(t, "127.10.1.4:0"), rec.on)
	defer in.Stop()
	rec.wait(t, Down)
}

// ProbeNow probes without waiting for the interval (an hour here) and
// tells its caller the verdict of that probe.
func TestInstanceProbeNow(t *testing.T) {
	t.Parallel()
	g := &toggler{addr: "127.10.1.5:47005"}
	g.up(t)
	defer g.down()
	rec := newRecorder()
	spec := &Spec{Type: TCP, Interval: time.Hour, Timeout: 3 * time.Hour}
	in := Start(spec, netip.MustParseAddrPort(g.addr), rec.on)
	defer in.Stop()
	rec.wait(t, Up)
	for _, want := range []bool{true, false} {
		if !want {
			g.down()
		}
		told := make(chan bool, 1)
		in.ProbeNow(func(up bool) { told <- up })
		select {
		case up := <-told:
			if up != want {
				t.Fatalf("probe now: up %v, want %v", up, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no probe within 5 s of ProbeNow (the interval is an hour)")
		}
	}
}
