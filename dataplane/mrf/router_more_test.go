package mrf

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// slowEnv is a testEnv whose dials wait for release, and that records
// the source each dial asked for.
type slowEnv struct {
	testEnv
	entered chan struct{}
	release chan struct{}
	srcs    chan netip.Addr
}

func (e *slowEnv) Dial(pool string, a netip.AddrPort, src netip.Addr, tcp *sockopt.Side) (net.Conn, func(), error) {
	if e.srcs != nil {
		e.srcs <- src
	}
	if e.entered != nil {
		e.entered <- struct{}{}
		<-e.release
	}
	return e.testEnv.Dial(pool, a, src, tcp)
}

// eventually waits, up to ten seconds, for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRouterPendingBounds(t *testing.T) {
	for _, tc := range []struct {
		name          string
		msgs, bytes   int
		sizes         []int // the opener's, then the waiters'
		wantRefusedAt int   // index in sizes of the one refused
	}{
		{"messages", 2, 0, []int{3, 3, 3}, 2},
		{"bytes", 0, 10, []int{4, 5, 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newEchoPeer(t, "127.133.1.1:0", "a")
			env := &slowEnv{testEnv: testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {a.addr()}}},
				entered: make(chan struct{}, 1), release: make(chan struct{})}
			pa := &Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1}
			cfg := &Config{Term: []byte("\n"), MaxPending: tc.msgs, MaxPendingBytes: tc.bytes,
				Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{pa}}}, Peers: map[string]*Peer{pa.Name: pa}}
			r := NewRouter(cfg, env, nil)
			defer r.Close()
			statuses := make(chan string, len(tc.sizes))
			clients := make([]*client, len(tc.sizes))
			for i, n := range tc.sizes {
				c := &client{ch: make(chan string, 4)}
				clients[i] = c
				s := r.NewSession(c.write, hookFuncs{failed: func(m *Message) bool { statuses <- m.Status; return true }})
				defer s.Close()
				go s.Handle(s.Message([]byte(strings.Repeat("x", n))))
				if i == 0 {
					select {
					case <-env.entered:
					case <-time.After(10 * time.Second):
						t.Fatal("the first message did not start a connection")
					}
					continue
				}
				if i < tc.wantRefusedAt {
					want := i + 1
					eventually(t, "the message waits for the connection", func() bool {
						r.mu.Lock()
						defer r.mu.Unlock()
						for _, o := range r.shared {
							o.mu.Lock()
							w := o.waiting
							o.mu.Unlock()
							return w == want
						}
						return false
					})
				}
			}
			select {
			case st := <-statuses:
				if st != StatusPendingFull {
					t.Fatalf("MR_FAILED status %q, want %q", st, StatusPendingFull)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no message failed past the bound")
			}
			close(env.release)
			for i, c := range clients {
				if i == tc.wantRefusedAt {
					continue
				}
				if got := c.next(t); !strings.HasPrefix(got, "a:") {
					t.Fatalf("client %d got %q", i, got)
				}
			}
			if r.C.PendingFull.Load() != 1 || r.C.Failed.Load() != 1 || r.C.ConnsOpened.Load() != 1 {
				t.Fatalf("pending full %d failed %d opened %d", r.C.PendingFull.Load(), r.C.Failed.Load(), r.C.ConnsOpened.Load())
			}
		})
	}
}

// pusher answers each line with "ack:line", then sends "push:line" of
// its own, and reports every other line it reads (the answers to its
// pushes).
func pusher(t *testing.T, addr string) (netip.AddrPort, chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					l := sc.Text()
					if strings.HasPrefix(l, "b:") {
						got <- l
						continue
					}
					c.Write([]byte("ack:" + l + "\npush:" + l + "\n"))
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), got
}

func TestRouterUnsolicitedPeerMessagesAreRouted(t *testing.T) {
	pAddr, answers := pusher(t, "127.133.1.2:0")
	b := newEchoPeer(t, "127.133.1.3:0", "b")
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/pp": {pAddr}, "/Common/pb": {b.addr()}}}
	pp := &Peer{Name: "/Common/pusher", Pool: "/Common/pp", Conns: 1}
	pb := &Peer{Name: "/Common/peer_b", Pool: "/Common/pb", Conns: 1}
	cfg := &Config{Term: []byte("\n"),
		Routes: []*Route{{Name: "/Common/to_p", Dst: "p", Peers: []*Peer{pp}}, {Name: "/Common/any", Peers: []*Peer{pb}}},
		Peers:  map[string]*Peer{pp.Name: pp, pb.Name: pb}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	c := &client{ch: make(chan string, 4)}
	s := r.NewSession(c.write, nil)
	defer s.Close()
	m := s.Message([]byte("hello"))
	m.Dst = "p"
	s.Handle(m)
	if got := c.next(t); got != "ack:hello" {
		t.Fatalf("client got %q", got)
	}
	// The pusher's own message took the default route to b, and b's
	// answer went back on the pusher's connection.
	select {
	case got := <-answers:
		if got != "b:push:hello" {
			t.Fatalf("pusher got %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pusher's message was not routed")
	}
	eventually(t, "counted", func() bool { return r.C.Unsolicited.Load() == 1 && r.C.Answered.Load() == 2 })
	if r.C.Received.Load() != 1 || r.C.Routed.Load() != 2 || r.C.Delivered.Load() != 1 || r.C.ConnsOpened.Load() != 2 {
		t.Fatalf("received %d routed %d delivered %d opened %d", r.C.Received.Load(), r.C.Routed.Load(), r.C.Delivered.Load(), r.C.ConnsOpened.Load())
	}
	// A client that does not name p is not answered by the pusher.
	c.ch = make(chan string, 4)
	s.Handle(s.Message([]byte("direct")))
	if got := c.next(t); got != "b:direct" {
		t.Fatalf("client got %q", got)
	}
}

func TestTransportSource(t *testing.T) {
	local := netip.MustParseAddr("127.133.1.9")
	v4 := netip.MustParseAddr("127.133.1.1")
	v6 := netip.MustParseAddr("::1")
	p1, p2 := netip.MustParseAddr("127.133.1.21"), netip.MustParseAddr("127.133.1.22")
	for _, tc := range []struct {
		name string
		tr   *Transport
		dst  netip.Addr
		want []netip.Addr // over successive connections
	}{
		{"none", nil, v4, []netip.Addr{{}}},
		{"no snat", &Transport{}, v4, []netip.Addr{{}}},
		{"automap", &Transport{SNAT: SNATAutomap}, v4, []netip.Addr{local, local}},
		{"automap other family", &Transport{SNAT: SNATAutomap}, v6, []netip.Addr{{}}},
		{"snatpool in turn", &Transport{SNAT: SNATPool, SNATAddrs: []netip.Addr{p1, p2}}, v4, []netip.Addr{p2, p1, p2}},
		{"snatpool other family", &Transport{SNAT: SNATPool, SNATAddrs: []netip.Addr{p1}}, v6, []netip.Addr{{}}},
	} {
		for i, w := range tc.want {
			if got := tc.tr.source(local, tc.dst); got != w {
				t.Errorf("%s: connection %d from %v, want %v", tc.name, i, got, w)
			}
		}
	}
}

func TestRouterDialsFromTheTransport(t *testing.T) {
	a := newEchoPeer(t, "127.133.1.4:0", "a")
	env := &slowEnv{testEnv: testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {a.addr()}}}, srcs: make(chan netip.Addr, 4)}
	tr := &Transport{Name: "/Common/tc", SNAT: SNATAutomap}
	pa := &Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Transport: tr.Name, TC: tr}
	// A peer a rule made names the transport-config.
	cfg := &Config{Term: []byte("\n"), Local: netip.MustParseAddr("127.133.1.9"), Transports: map[string]*Transport{tr.Name: tr},
		Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{pa}}}, Peers: map[string]*Peer{pa.Name: pa}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	r.AddPeer(&Peer{Name: "dyn", Pool: "/Common/pa", Transport: "tc", Mode: PerClient})
	c := &client{ch: make(chan string, 4)}
	s := r.NewSession(c.write, nil)
	defer s.Close()
	s.Handle(s.Message([]byte("one")))
	c.next(t)
	m := s.Message([]byte("two"))
	m.RoutePeers = []string{"dyn"}
	s.Handle(m)
	c.next(t)
	for i := range 2 {
		if got := <-env.srcs; got != cfg.Local {
			t.Fatalf("connection %d from %v, want the virtual's address", i, got)
		}
	}
}

func TestConfigSameSeesTheTransport(t *testing.T) {
	mk := func(snat string) *Config {
		tr := &Transport{Name: "/Common/tc", SNAT: snat}
		p := &Peer{Name: "/Common/p", Pool: "/Common/pool", Conns: 1, Transport: tr.Name, TC: tr}
		return &Config{Peers: map[string]*Peer{p.Name: p}, Transports: map[string]*Transport{tr.Name: tr}}
	}
	if !mk(SNATAutomap).Same(mk(SNATAutomap)) {
		t.Fatal("equal configs differ")
	}
	if mk(SNATAutomap).Same(mk("")) {
		t.Fatal("a transport-config's SNAT change went unseen")
	}
}

func TestRouterAutoInitKeepsPeersConnected(t *testing.T) {
	ln, err := net.Listen("tcp", "127.133.1.5:0")
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	defer ln.Close()
	conns := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	addr := netip.MustParseAddrPort(ln.Addr().String())
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {addr}}}
	pa := &Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 2, AutoInit: 100 * time.Millisecond}
	cfg := &Config{Term: []byte("\n"), Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{pa}}}, Peers: map[string]*Peer{pa.Name: pa}}
	if !cfg.AutoInit() {
		t.Fatal("AutoInit() false for a route's peer with auto-initialization")
	}
	r := NewRouter(cfg, env, nil)
	r.AutoInit()
	r.AutoInit() // a second call starts nothing more
	accept := func() net.Conn {
		t.Helper()
		select {
		case c := <-conns:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no connection from the router within 10s")
			return nil
		}
	}
	first := accept()
	accept() // both instances of number-connections
	// The peer closes one: the router opens it again.
	first.Close()
	accept()
	eventually(t, "three opened", func() bool { return r.C.ConnsOpened.Load() == 3 })
	r.Close()
	// Closed: no more connections.
	select {
	case c := <-conns:
		c.Close()
		t.Fatal("a connection after Close")
	case <-time.After(300 * time.Millisecond):
	}
}
