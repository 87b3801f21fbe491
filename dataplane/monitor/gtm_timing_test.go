package monitor

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"sync/atomic"
	"testing"
	"time"
)

// udpDropFirst answers a datagram with "pong" only every nth one it
// gets (n 0: never), as a member losing datagrams.
func udpDropFirst(t *testing.T, n int64) netip.AddrPort {
	t.Helper()
	var seen atomic.Int64
	pc, err := net.ListenPacket("udp", "127.16.140.3:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if k := seen.Add(1); n > 0 && k%n == 0 {
				pc.WriteTo([]byte("pong"), from)
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

// The BIG-IP DNS timing: a down answer marks down at once unless
// ignore-down-response is on; no answer waits out the timeout whatever
// it says; probe-attempts retries within one probe; probe-timeout
// bounds each probe. Each case runs an instance until it has traced
// `probes` probes (each a line; a probe of several attempts traces
// each) or reported `want`, and checks what it reported by then.
func TestGTMTiming(t *testing.T) {
	t.Parallel()
	ok := answer(t, "127.16.140.1:0", "HTTP/1.0 200 OK\r\n\r\nup")
	unavailable := answer(t, "127.16.140.1:0", "HTTP/1.0 503 Service Unavailable\r\n\r\n")
	silent := answer(t, "127.16.140.1:0", "")
	closed := closedPort(t, "127.16.140.2:0")
	slow := slowAnswer(t, "127.16.140.1:0", 600*time.Millisecond, "HTTP/1.0 200 OK\r\n\r\nup")
	http := func(mod func(*Spec)) Spec {
		s := Spec{Name: "/Common/my_http", Type: HTTP, Interval: 30 * time.Millisecond, Timeout: time.Minute,
			Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("200 OK")}
		mod(&s)
		return s
	}
	udp := func(attempts int) Spec {
		return Spec{Name: "/Common/my_udp", Type: UDP, Interval: 30 * time.Millisecond, Timeout: time.Minute,
			ProbeTimeout: 500 * time.Millisecond, Send: "ping", Recv: regexp.MustCompile("pong"),
			DownOnResponse: true, Attempts: attempts, AttemptInterval: 10 * time.Millisecond}
	}
	for _, tc := range []struct {
		name   string
		spec   Spec
		target netip.AddrPort
		probes int    // traced tries to wait for when want is not reported first
		want   Status // what it must report; Checking: nothing but checking
		err    string // part of the last error, when not up
	}{
		{"200 is up", http(func(*Spec) {}), ok, 3, Up, ""},
		{"503 down at once", http(func(s *Spec) { s.DownOnResponse = true }), unavailable, 3, Down, "did not match"},
		{"refused down at once", http(func(s *Spec) { s.DownOnResponse = true }), closed, 3, Down, "Unable to connect"},
		{"503 ignored until the timeout", http(func(*Spec) {}), unavailable, 4, Checking, "did not match"},
		{"503 ignored, then the timeout passes", http(func(s *Spec) { s.Timeout = 200 * time.Millisecond }), unavailable, 100, Down, "did not match"},
		{"silence is no down answer", http(func(s *Spec) { s.DownOnResponse, s.ProbeTimeout = true, 50*time.Millisecond }), silent, 4, Checking, "No successful responses"},
		{"silence, then the timeout passes", http(func(s *Spec) {
			s.DownOnResponse, s.ProbeTimeout, s.Timeout = true, 50*time.Millisecond, 300*time.Millisecond
		}), silent, 100, Down, "No successful responses"},
		{"slow answer within the timeout", http(func(*Spec) {}), slow, 3, Up, ""},
		{"slow answer past probe-timeout", http(func(s *Spec) { s.ProbeTimeout = 100 * time.Millisecond }), slow, 3, Checking, "No successful responses"},
		{"udp answered", udp(1), udpDropFirst(t, 1), 3, Up, ""},
		// One probe a minute: only its attempts can reach the third datagram.
		{"udp answered at the third attempt", slowly(udp(3)), udpDropFirst(t, 3), 3, Up, ""},
		{"udp not answered at the first", slowly(udp(1)), udpDropFirst(t, 3), 1, Checking, "No successful responses"},
		{"udp dropped, one attempt each", udp(1), udpDropFirst(t, 0), 4, Checking, "No successful responses"},
		{"udp port unreachable", udp(1), closedUDPAt(t, "127.16.140.3:0"), 3, Down, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecorder()
			traced := make(chan string, 256)
			in := StartTraced(&tc.spec, tc.target, r.on, func(line string) {
				select {
				case traced <- line:
				default:
				}
			})
			defer in.Stop()
			var last State
			seen := 0
			deadline := time.After(10 * time.Second)
			// A status other than checking is waited for however many tries
			// it takes under load; checking is judged after tc.probes tries.
			for (tc.want == Checking && seen < tc.probes) || (tc.want != Checking && last.Status != tc.want) {
				select {
				case s := <-r.ch:
					last = s
				case <-traced:
					seen++
				case <-deadline:
					t.Fatalf("after %d tries: %+v, want %v", seen, last, tc.want)
				}
			}
			st := in.State()
			if st.Status != tc.want {
				t.Fatalf("after %d tries: %+v, want %v", seen, st, tc.want)
			}
			if tc.err != "" && !regexp.MustCompile(regexp.QuoteMeta(tc.err)).MatchString(st.LastError) {
				t.Errorf("last error %q, want it to say %q", st.LastError, tc.err)
			}
		})
	}
}

func slowly(s Spec) Spec {
	s.Interval = time.Minute
	return s
}

// slowAnswer is answer after a delay: a member slower than a short
// probe-timeout and quicker than the monitor's timeout.
func slowAnswer(t *testing.T, addr string, delay time.Duration, reply string) netip.AddrPort {
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
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.Read(make([]byte, 512))
				time.Sleep(delay)
				c.Write([]byte(reply))
			}()
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String())
}

func closedUDPAt(t *testing.T, addr string) netip.AddrPort {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddrPort(pc.LocalAddr().String())
	pc.Close()
	return a
}

func TestIsDownResponse(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNoResponse, false},
		{fmt.Errorf("%w (script line 2)", ErrNoResponse), false},
		{ErrNoMatch, true},
		{ErrReverseMatch, true},
		{ErrPortUnreachable, true},
		{errors.New("Unable to connect; connection refused"), true},
	} {
		if got := IsDownResponse(tc.err); got != tc.want {
			t.Errorf("IsDownResponse(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// gateway-icmp pings with the LTM's probe, probe-attempts times within
// one probe.
func TestGTMGatewayICMP(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("gateway-icmp needs root (a raw ICMP socket)")
	}
	r := newRecorder()
	in := Start(&Spec{Name: "/Common/gateway_icmp", Type: GatewayICMP, Interval: 50 * time.Millisecond, Timeout: time.Minute,
		ProbeTimeout: time.Second, DownOnResponse: true, Attempts: 3, AttemptInterval: 10 * time.Millisecond},
		netip.MustParseAddrPort("127.16.140.9:0"), r.on)
	defer in.Stop()
	r.wait(t, Up)
}
