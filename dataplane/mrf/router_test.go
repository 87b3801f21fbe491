package mrf

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// echoPeer is a member that answers each line with "name:line" and
// counts the connections it accepted.
type echoPeer struct {
	name    string
	ln      net.Listener
	accepts atomic.Int32
}

func newEchoPeer(t *testing.T, addr, name string) *echoPeer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	p := &echoPeer{name: name, ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepts.Add(1)
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if sc.Text() == "silent" {
						continue
					}
					if sc.Text() == "hangup" {
						return
					}
					c.Write([]byte(name + ":" + sc.Text() + "\n"))
				}
			}()
		}
	}()
	return p
}

func (p *echoPeer) addr() netip.AddrPort { return netip.MustParseAddrPort(p.ln.Addr().String()) }

// testEnv balances each pool round robin over its addresses.
type testEnv struct {
	mu    sync.Mutex
	pools map[string][]netip.AddrPort
	n     int
}

func (e *testEnv) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ms := e.pools[pool]
	for range len(ms) {
		a := ms[e.n%len(ms)]
		e.n++
		ok := true
		for _, x := range avoid {
			if x == a {
				ok = false
			}
		}
		if ok {
			return a, true
		}
	}
	return netip.AddrPort{}, false
}

func (e *testEnv) Dial(_ string, a netip.AddrPort, _ netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	c, err := net.DialTimeout("tcp", a.String(), 5*time.Second)
	return c, func() {}, err
}

// client collects what a session writes to its client.
type client struct {
	ch chan string
}

func (c *client) write(b []byte) error {
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			c.ch <- strings.TrimSuffix(l, "\n")
		}
	}
	return nil
}

func (c *client) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-c.ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10s")
		return ""
	}
}

type hookFuncs struct {
	in, eg, failed func(*Message) bool
}

func (h hookFuncs) Ingress(m *Message) bool { return h.in == nil || h.in(m) }
func (h hookFuncs) Egress(m *Message) bool  { return h.eg == nil || h.eg(m) }
func (h hookFuncs) Failed(m *Message) bool  { return h.failed == nil || h.failed(m) }

func TestRouterRatioRouteBalancesAndReuses(t *testing.T) {
	a := newEchoPeer(t, "127.127.31.1:0", "a")
	b := newEchoPeer(t, "127.127.31.2:0", "b")
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {a.addr()}, "/Common/pb": {b.addr()}}}
	pa := &Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Ratio: 1}
	pb := &Peer{Name: "/Common/peer_b", Pool: "/Common/pb", Conns: 1, Ratio: 1}
	cfg := &Config{Term: []byte("\n"), MaxRetries: 1, Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{pa, pb}, Ratio: true}},
		Peers: map[string]*Peer{pa.Name: pa, pb.Name: pb}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	seen := map[string]int{}
	for i := range 3 { // three clients, two messages each
		c := &client{ch: make(chan string, 8)}
		s := r.NewSession(c.write, nil)
		for j := range 2 {
			msg := "m" + string(rune('0'+i)) + string(rune('0'+j))
			if !s.Handle(s.Message([]byte(msg))) {
				t.Fatal("Handle ended the session")
			}
			got := c.next(t)
			if !strings.HasSuffix(got, ":"+msg) {
				t.Fatalf("answer %q to %q", got, msg)
			}
			seen[got[:1]]++
		}
		s.Close()
	}
	if seen["a"] != 3 || seen["b"] != 3 {
		t.Fatalf("ratio 1:1 split %v, want 3 and 3", seen)
	}
	if a.accepts.Load() != 1 || b.accepts.Load() != 1 {
		t.Fatalf("per-peer connections: a %d b %d, want one each reused across clients", a.accepts.Load(), b.accepts.Load())
	}
}

func TestRouterPerClientAndDefaultPool(t *testing.T) {
	a := newEchoPeer(t, "127.127.31.3:0", "a")
	b := newEchoPeer(t, "127.127.31.4:0", "b")
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/p": {a.addr(), b.addr()}}}
	pc := &Peer{Name: "/Common/pc", Pool: "/Common/p", Conns: 1, Mode: PerClient}
	cfg := &Config{Term: []byte("\n"), DefaultPool: "/Common/p",
		Routes: []*Route{{Name: "/Common/r", Dst: "x", Peers: []*Peer{pc}}}, Peers: map[string]*Peer{pc.Name: pc}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	// No route matches: the default pool, each message balanced.
	c := &client{ch: make(chan string, 8)}
	s := r.NewSession(c.write, nil)
	s.Handle(s.Message([]byte("1")))
	g1 := c.next(t)
	s.Handle(s.Message([]byte("2")))
	g2 := c.next(t)
	if g1[:1] == g2[:1] {
		t.Fatalf("default pool answers %q %q from one member", g1, g2)
	}
	// The route for dst x: per-client, one connection per client.
	before := a.accepts.Load() + b.accepts.Load()
	for range 2 {
		c := &client{ch: make(chan string, 8)}
		s := r.NewSession(c.write, nil)
		for range 2 {
			m := s.Message([]byte("hi"))
			m.Dst = "x"
			s.Handle(m)
			c.next(t)
		}
		s.Close()
	}
	if got := a.accepts.Load() + b.accepts.Load() - before; got != 2 {
		t.Fatalf("per-client: %d connections for two clients, want 2", got)
	}
}

func TestRouterFailedRetryAndReturn(t *testing.T) {
	good := newEchoPeer(t, "127.127.31.5:0", "good")
	dead, err := net.Listen("tcp", "127.127.31.6:0")
	if err != nil {
		t.Skip(err)
	}
	deadAddr := netip.MustParseAddrPort(dead.Addr().String())
	dead.Close() // refused from now on
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/bad": {deadAddr}, "/Common/good": {good.addr()}}}
	bad := &Peer{Name: "/Common/bad", Pool: "/Common/bad", Conns: 1}
	ok := &Peer{Name: "/Common/ok", Pool: "/Common/good", Conns: 1}
	cfg := &Config{Term: []byte("\n"), MaxRetries: 1, Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{bad}}},
		Peers: map[string]*Peer{bad.Name: bad, ok.Name: ok}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	var failed []string
	var mu sync.Mutex
	c := &client{ch: make(chan string, 8)}
	s := r.NewSession(c.write, hookFuncs{failed: func(m *Message) bool {
		mu.Lock()
		failed = append(failed, m.Status)
		mu.Unlock()
		switch string(m.Data) {
		case "retry":
			m.RoutePeers = []string{"ok"}
			m.Retry = true
		case "answer":
			m.Data = []byte("no peer for you")
			m.Return = true
		}
		return true
	}})
	s.Handle(s.Message([]byte("retry")))
	if got := c.next(t); got != "good:retry" {
		t.Fatalf("retried message answered %q", got)
	}
	s.Handle(s.Message([]byte("answer")))
	if got := c.next(t); got != "no peer for you" {
		t.Fatalf("returned message %q", got)
	}
	// A peer that closes with a request in flight fails it too.
	m := s.Message([]byte("hangup"))
	m.RoutePeers = []string{"/Common/ok"}
	s.Handle(m)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(failed)
		mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 3 || failed[0] != StatusConnFailed || failed[2] != StatusConnFailed {
		t.Fatalf("MR_FAILED statuses %q", failed)
	}
}

func TestRouterNoRoute(t *testing.T) {
	r := NewRouter(&Config{Term: []byte("\n")}, &testEnv{}, nil)
	var st string
	c := &client{ch: make(chan string, 1)}
	s := r.NewSession(c.write, hookFuncs{failed: func(m *Message) bool { st = m.Status; return true }})
	s.Handle(s.Message([]byte("x")))
	if st != StatusNoRoute || r.C.Dropped.Load() != 1 {
		t.Fatalf("status %q dropped %d", st, r.C.Dropped.Load())
	}
}

func TestLookupScores(t *testing.T) {
	cfg := &Config{Routes: []*Route{
		{Name: "any"}, {Name: "src", Src: "s"}, {Name: "dst", Dst: "d"}, {Name: "both", Src: "s", Dst: "d"},
	}}
	for _, tc := range []struct{ src, dst, want string }{
		{"s", "d", "both"}, {"x", "d", "dst"}, {"s", "x", "src"}, {"x", "x", "any"}, {"", "", "any"},
	} {
		if got := cfg.Lookup(tc.src, tc.dst); got == nil || got.Name != tc.want {
			t.Errorf("Lookup(%q,%q) = %v, want %s", tc.src, tc.dst, got, tc.want)
		}
	}
}

func TestConfigSame(t *testing.T) {
	mk := func(ratio int) *Config {
		p := &Peer{Name: "/Common/p", Pool: "/Common/pool", Conns: 1, Ratio: ratio}
		return &Config{Term: []byte("\n"), Routes: []*Route{{Name: "/Common/r", Dst: "d", Peers: []*Peer{p}}}, Peers: map[string]*Peer{p.Name: p}}
	}
	if !mk(1).Same(mk(1)) {
		t.Fatal("equal configs differ")
	}
	if mk(1).Same(mk(2)) {
		t.Fatal("a peer's ratio change went unseen")
	}
}
