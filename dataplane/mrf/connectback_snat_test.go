package mrf

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// addrHoldEnv dials from the source it is given and holds addresses up
// to limit each (a SNATAddrHolder), counting what it holds, refuses
// and gets back.
type addrHoldEnv struct {
	testEnv
	limit int
	idle  time.Duration // the holds' tcp-idle-timeout (0: none)
	mu    sync.Mutex
	held  map[netip.Addr]int
	refus map[netip.Addr]int
}

type addrHold struct {
	e    *addrHoldEnv
	a    netip.Addr
	idle time.Duration
}

func (h addrHold) Release() {
	h.e.mu.Lock()
	h.e.held[h.a]--
	h.e.mu.Unlock()
}
func (h addrHold) TCPIdle() (time.Duration, bool) { return h.idle, h.idle > 0 }
func (addrHold) UDPIdle() (time.Duration, bool)   { return 0, false }

func (e *addrHoldEnv) HoldSNATAddr(a netip.Addr) (SourceHold, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held[a] >= e.limit {
		e.refus[a]++
		return nil, false
	}
	e.held[a]++
	return addrHold{e, a, e.idle}, true
}

func (e *addrHoldEnv) count(a netip.Addr) (held, refused int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.held[a], e.refus[a]
}

func (e *addrHoldEnv) Dial(_ string, a netip.AddrPort, src netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if src.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	}
	c, err := d.Dial("tcp", a.String())
	return c, func() {}, err
}

// TestConnectBackSNATHold: a connection back to a client leaves from the
// virtual's address and holds it through a SNATAddrHolder: at a limit
// of 1 a second connection back (to another client) is refused with
// ErrSNATAddrFull and counted, and once the client closes the first
// the address is given back and the second is made. The clients are
// real listeners that see the virtual's address.
func TestConnectBackSNATHold(t *testing.T) {
	local := netip.MustParseAddr("127.250.40.1")
	seen := make(chan netip.AddrPort, 4)
	var ls []net.Listener
	for _, a := range []string{"127.250.40.11:30841", "127.250.40.12:30842"} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		ls = append(ls, ln)
	}
	conns := make(chan net.Conn, 4)
	for _, ln := range ls {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				seen <- netip.MustParseAddrPort(c.RemoteAddr().String())
				conns <- c
			}
		}()
	}
	t.Cleanup(func() {
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	env := &addrHoldEnv{limit: 1, held: map[netip.Addr]int{}, refus: map[netip.Addr]int{}}
	r := NewRouter(&Config{Local: local, ConnectBack: true, Term: []byte("\n")}, env, nil)
	a1, a2 := netip.MustParseAddrPort(ls[0].Addr().String()), netip.MustParseAddrPort(ls[1].Addr().String())
	if _, err := r.backConn(a1); err != nil {
		t.Fatal(err)
	}
	var c1 net.Conn
	select {
	case from := <-seen:
		if from.Addr() != local {
			t.Errorf("the client saw the connection back from %s, want %s", from, local)
		}
		c1 = <-conns
	case <-time.After(5 * time.Second):
		t.Fatal("no connection back")
	}
	if held, _ := env.count(local); held != 1 {
		t.Errorf("the connection back: %d holds, want 1", held)
	}
	if _, err := r.backConn(a2); err != ErrSNATAddrFull {
		t.Fatalf("second connection back at the limit: %v, want ErrSNATAddrFull", err)
	}
	if _, refused := env.count(local); refused != 1 {
		t.Errorf("refusals %d, want 1", refused)
	}
	c1.Close()
	held := -1
	for i := 0; i < 250 && held != 0; i++ {
		held, _ = env.count(local)
		time.Sleep(20 * time.Millisecond)
	}
	if held != 0 {
		t.Fatalf("the client closed the connection back: %d holds, want 0", held)
	}
	if _, err := r.backConn(a2); err != nil {
		t.Fatalf("second connection back once the address came back: %v", err)
	}
	if held, _ := env.count(local); held != 1 {
		t.Errorf("the second connection back: %d holds, want 1", held)
	}
}

// TestConnectBackSNATIdle: a connection back holding an address whose
// ltm snat-translation sets tcp-idle-timeout closes once idle that
// long (not after the 30 seconds of its own), the client seeing it
// close and the hold given back; without one it keeps its own, so is
// still open after several of those timeouts.
func TestConnectBackSNATIdle(t *testing.T) {
	local := netip.MustParseAddr("127.255.142.1")
	for _, tc := range []struct {
		name   string
		idle   time.Duration
		closes bool
	}{
		{"tcp-idle-timeout", 400 * time.Millisecond, true},
		{"none", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.255.142.11:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					accepted <- c
				}
			}()
			env := &addrHoldEnv{limit: 1, idle: tc.idle, held: map[netip.Addr]int{}, refus: map[netip.Addr]int{}}
			r := NewRouter(&Config{Local: local, ConnectBack: true, Term: []byte("\n")}, env, nil)
			if _, err := r.backConn(netip.MustParseAddrPort(ln.Addr().String())); err != nil {
				t.Fatal(err)
			}
			var c net.Conn
			select {
			case c = <-accepted:
			case <-time.After(5 * time.Second):
				t.Fatal("no connection back")
			}
			defer c.Close()
			// The client sends nothing: read until the connection back
			// closes, or 5 x 400 ms (an idle time of its own is 30 s).
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Read(make([]byte, 1))
			ne, timedOut := err.(net.Error)
			closed := err != nil && !(timedOut && ne.Timeout())
			if closed != tc.closes {
				t.Fatalf("connection back closed %v (%v) with the client silent, want %v", closed, err, tc.closes)
			}
			want := 1
			if tc.closes {
				want = 0
			}
			held := -1
			for i := 0; i < 250 && held != want; i++ {
				held, _ = env.count(local)
				time.Sleep(20 * time.Millisecond)
			}
			if held != want {
				t.Errorf("holds %d, want %d", held, want)
			}
		})
	}
}
