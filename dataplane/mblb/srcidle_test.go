package mblb

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// A server connection given its own idle timeout (Leg.SetIdleTimeout,
// an ltm snat-translation's tcp-idle-timeout) is closed once idle that
// long, pooled (OneConnect) or the client's own, though the engine's own
// timeouts are far longer or none; without one it stays open.
func TestLegIdleTimeout(t *testing.T) {
	const own = 150 * time.Millisecond
	cases := []struct {
		name      string
		oneConn   bool
		setIdle   bool
		wantClose bool
	}{
		{"pooled, own timeout", true, true, true},
		{"client's own, own timeout", false, true, true},
		{"pooled, none", true, false, false},
		{"client's own, none", false, false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, "127.247.10.1:0", "S1", wireLength)
			legs := newLegLog()
			cfg := baseConfig(newTestPool(s), legs)
			cfg.Request = lengthFraming
			if c.oneConn {
				cfg.OneConnect = &OneConnect{MaxSize: 4, IdleTimeoutOverride: time.Hour}
			}
			if c.setIdle {
				opened := cfg.Events.LegOpened
				cfg.Events.LegOpened = func(l *Leg) {
					l.SetIdleTimeout(own)
					opened(l)
				}
			}
			vs := startVS(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 247, 10, byte(2 + i)}), 0).String(), cfg)
			cl := dialVS(t, vs, "c", wireLength)
			if ans, err := cl.call("one"); err != nil || ans != "S1|one" {
				t.Fatalf("call: %q, %v", ans, err)
			}
			if c.wantClose {
				waitFor(t, "the idle server connection to close", func() bool { open, _, _, _ := legs.snapshot(); return open == 0 })
				// The client is served again, on a new connection.
				if ans, err := cl.call("two"); err != nil || ans != "S1|two" {
					t.Fatalf("after the idle close: %q, %v", ans, err)
				}
				if n := s.acceptedConns(); n != 2 {
					t.Fatalf("member accepted %d connections, want 2", n)
				}
				return
			}
			time.Sleep(4 * own) // a lower bound only: it must still be open
			if open, _, _, _ := legs.snapshot(); open != 1 {
				t.Fatalf("%d server connections open, want 1", open)
			}
		})
	}
}

// A connect refused for its source (SourceRefused) fails over to the
// next member without blaming it, and with none left resets the client
// with the refusal's cause, not NoServer; a plain failure still says
// NoServer.
func TestSourceRefusedCause(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want rstcause.Cause
	}{
		{"translation full", &SourceRefused{Cause: rstcause.SNATLimit, Err: errors.New("full")}, rstcause.SNATLimit},
		{"port in use", &SourceRefused{Cause: rstcause.SNATPort, Err: errors.New("port")}, rstcause.SNATPort},
		{"member refused", errors.New("connection refused"), rstcause.NoServer},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s1 := startServer(t, "127.247.11.1:0", "S1", wireLength)
			s2 := startServer(t, "127.247.11.2:0", "S2", wireLength)
			cfg := baseConfig(newTestPool(s1, s2), nil)
			cfg.Request = lengthFraming
			var mu sync.Mutex
			var lines []string
			cfg.Rst = &rstcause.Log{}
			cfg.Rst.Set(func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() })
			dials := 0
			cfg.Dial = func(context.Context, netip.AddrPort, Member) (net.Conn, error) {
				mu.Lock()
				dials++
				mu.Unlock()
				return nil, c.err
			}
			cfg.DialFD = func(netip.AddrPort, Member) (int, bool, netip.AddrPort, error) {
				mu.Lock()
				dials++
				mu.Unlock()
				return -1, false, netip.AddrPort{}, c.err
			}
			vs := startVS(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 247, 11, byte(10 + i)}), 0).String(), cfg)
			cl := dialVS(t, vs, "c", wireLength)
			if _, err := cl.call("x"); err == nil {
				t.Fatal("the client was answered; want a reset")
			}
			waitFor(t, "the reset's line", func() bool { mu.Lock(); defer mu.Unlock(); return len(lines) > 0 })
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(lines[0], c.want.String()) {
				t.Fatalf("reset line %q, want the cause %q", lines[0], c.want)
			}
			if dials < 2 {
				t.Fatalf("%d dials, want both members tried", dials)
			}
		})
	}
}

// A connection the engine is given after it closed (a commit retired it
// while the dial was under way) is reported closed, so that the proxy
// gives back what it holds for it.
func TestLegGoneAfterClose(t *testing.T) {
	var closed []*Leg
	e := &Engine{closed: true, servers: map[*serverConn]struct{}{}}
	e.cfg.Events.LegClosed = func(l *Leg) { closed = append(closed, l) }
	a, b := net.Pipe()
	defer b.Close()
	m := Member{ID: 1, Name: "m", Addr: netip.MustParseAddrPort("127.247.12.1:80")}
	if _, err := e.attachConn(nil, m, nil, &memberStats{}, a); !errors.Is(err, errClosed) {
		t.Fatalf("attachConn = %v, want errClosed", err)
	}
	if len(closed) != 1 || closed[0].Member.Addr != m.Addr {
		t.Fatalf("LegClosed saw %d legs, want the one refused", len(closed))
	}
}

// TestWantTickFreshClock: shortening the janitor's tick brings the
// engine's clock up to date. The clock is as old as the longer tick
// could leave it (here 900 ms behind); activity stamped with it right
// after a connection got an idle timeout of its own (SetIdleTimeout asks
// for a quarter of it) counted as idle that long already, and the
// transcript snat_idle_msg saw a 2 s tcp-idle-timeout close a connection
// after little more than one second. A tick no shorter leaves the clock
// alone.
func TestWantTickFreshClock(t *testing.T) {
	e := &Engine{retick: make(chan struct{}, 1)}
	e.tick.Store(int64(time.Second))
	stale := time.Now().Add(-900 * time.Millisecond).UnixNano()
	e.clock.Store(stale)
	e.wantTick(2 * time.Second) // not shorter
	if e.now() != stale {
		t.Fatalf("a tick no shorter moved the clock")
	}
	before := time.Now().UnixNano()
	e.wantTick(500 * time.Millisecond)
	if got := e.now(); got < before {
		t.Fatalf("clock %v behind the time of the shorter tick: activity stamped now would count as idle already", time.Duration(before-got))
	}
	if d := time.Duration(e.tick.Load()); d != 500*time.Millisecond {
		t.Fatalf("tick %v, want 500ms", d)
	}
}

// TestIdleSince: a server connection stamped with the janitor's clock
// counts as idle only a tick past its timeout, as the activity may have
// come up to a tick after the stamp; never without a timeout.
func TestIdleSince(t *testing.T) {
	e := &Engine{}
	tick := int64(500 * time.Millisecond)
	e.tick.Store(tick)
	to := int64(2 * time.Second)
	now := int64(100 * time.Second)
	for _, tc := range []struct {
		name string
		last int64
		to   int64
		want bool
	}{
		{"no timeout", 0, 0, false},
		{"idle exactly the timeout", now - to, to, false},
		{"the timeout and half a tick", now - to - tick/2, to, false},
		{"the timeout and a tick", now - to - tick, to, false},
		{"past the timeout and a tick", now - to - tick - 1, to, true},
	} {
		if got := e.idleSince(now, tc.last, tc.to); got != tc.want {
			t.Errorf("%s: idle %v, want %v", tc.name, got, tc.want)
		}
	}
}
