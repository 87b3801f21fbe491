package mrf

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestPrimeOpensPeerConnections(t *testing.T) {
	a := newEchoPeer(t, "127.157.1.1:0", "a")
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {a.addr()}}}
	shared := &Peer{Name: "/Common/shared", Pool: "/Common/pa", Conns: 2}
	own := &Peer{Name: "/Common/own", Pool: "/Common/pa", Conns: 1, Mode: PerClient}
	cfg := &Config{Term: []byte("\n"), Peers: map[string]*Peer{shared.Name: shared, own.Name: own},
		Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{shared}}}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	if err := r.Prime(shared, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both connections of the shared peer open", func() bool { return a.accepts.Load() == 2 })
	if err := r.Prime(shared, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Prime(own, nil); err == nil {
		t.Fatal("a per-client peer primed with no client connection")
	}
	c := &client{ch: make(chan string, 8)}
	s := r.NewSession(c.write, nil)
	defer s.Close()
	for _, msg := range []string{"x", "y"} {
		s.Handle(s.Message([]byte(msg)))
		if got := c.next(t); got != "a:"+msg {
			t.Fatalf("answer %q", got)
		}
	}
	if n := a.accepts.Load(); n != 2 {
		t.Fatalf("%d connections after priming twice and routing, want the 2 primed", n)
	}
	if err := r.Prime(own, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the per-client peer's connection open", func() bool { return a.accepts.Load() == 3 })
}

func TestIgnorePeerPortReusesConnectionToHost(t *testing.T) {
	a := newEchoPeer(t, "127.157.1.2:0", "a")
	other := netip.AddrPortFrom(a.addr().Addr(), a.addr().Port()+1) // nothing listens there
	r := NewRouter(&Config{Term: []byte("\n")}, &testEnv{}, nil)
	defer r.Close()
	c := &client{ch: make(chan string, 8)}
	s := r.NewSession(c.write, nil)
	defer s.Close()
	m := s.Message([]byte("first"))
	m.RouteHost = a.addr()
	s.Handle(m)
	if got := c.next(t); got != "a:first" {
		t.Fatalf("answer %q", got)
	}
	for _, tc := range []struct {
		ignore, always, reuse bool
	}{{true, false, true}, {true, true, false}, {false, false, false}} {
		s.SetPortMatch(tc.ignore, tc.always)
		failed := make(chan bool, 1)
		s.hooks = hookFuncs{failed: func(*Message) bool { failed <- true; return true }}
		m := s.Message([]byte("again"))
		m.RouteHost = other
		s.Handle(m)
		if tc.reuse {
			if got := c.next(t); got != "a:again" {
				t.Fatalf("ignore %v always %v: answer %q", tc.ignore, tc.always, got)
			}
			continue
		}
		select {
		case <-failed:
		case got := <-c.ch:
			t.Fatalf("ignore %v always %v: answered %q on the other port's connection", tc.ignore, tc.always, got)
		case <-time.After(10 * time.Second):
			t.Fatalf("ignore %v always %v: the message to a closed port neither failed nor was answered", tc.ignore, tc.always)
		}
	}
	if n := a.accepts.Load(); n != 1 {
		t.Fatalf("%d connections to the host, want 1", n)
	}
}

func TestConnectBackPort(t *testing.T) {
	s := NewRouter(&Config{}, &testEnv{}, nil).NewSession(func([]byte) error { return nil }, nil)
	cl := netip.MustParseAddrPort("127.157.1.3:5060")
	if got := s.ConnectBack(cl); got != cl {
		t.Fatalf("no port set: %v", got)
	}
	s.SetConnectBackPort(5070)
	if got := s.ConnectBack(cl); got != netip.MustParseAddrPort("127.157.1.3:5070") || s.ConnectBackPort() != 5070 {
		t.Fatalf("port 5070: %v", got)
	}
	if ig, _ := s.PortMatch(); ig {
		t.Fatal("a session ignores peer ports by default")
	}
	if ig, _ := NewRouter(&Config{IgnorePort: true}, &testEnv{}, nil).NewSession(nil, nil).PortMatch(); !ig {
		t.Fatal("the router's ignore-client-port does not start its sessions ignoring peer ports")
	}
	s.SetEquivalent([]string{"/Common/vs2"})
	if e := s.Equivalent(); len(e) != 1 || e[0] != "/Common/vs2" {
		t.Fatalf("equivalent %v", e)
	}
}

// TestDisableParserPassesBytesThrough: with disable-parser the stream
// is not cut; each client's reads go on its own connection as they are,
// and whatever the peer sends comes back, with nothing awaited.
func TestDisableParserPassesBytesThrough(t *testing.T) {
	ln, err := net.Listen("tcp", "127.157.1.4:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	accepts := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts <- c
		}
	}()
	addr := netip.MustParseAddrPort(ln.Addr().String())
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/p": {addr}}}
	shared := &Peer{Name: "/Common/shared", Pool: "/Common/p", Conns: 1}
	cfg := &Config{DisableParser: true, NoResponse: true, Peers: map[string]*Peer{shared.Name: shared},
		Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{shared}}}}
	r := NewRouter(cfg, env, nil)
	defer r.Close()
	type cl struct {
		s   *Session
		got chan string
		srv net.Conn
	}
	var cls []*cl
	for i := range 2 {
		x := &cl{got: make(chan string, 8)}
		x.s = r.NewSession(func(b []byte) error { x.got <- string(b); return nil }, nil)
		defer x.s.Close()
		msg := []byte{'r', 'a', 'w', byte('0' + i), 0, '\n', 0xff}
		if m := x.s.Message(msg); m.Request {
			t.Fatal("a message with disable-parser awaits an answer")
		}
		x.s.Handle(x.s.Message(msg))
		select {
		case x.srv = <-accepts:
		case <-time.After(10 * time.Second):
			t.Fatalf("client %d: no peer connection", i)
		}
		buf := make([]byte, 64)
		x.srv.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := x.srv.Read(buf)
		if err != nil || string(buf[:n]) != string(msg) {
			t.Fatalf("client %d: peer read %q %v, want the bytes as sent", i, buf[:n], err)
		}
		cls = append(cls, x)
	}
	// Each client's own connection: what the peer pushes on it, unasked,
	// reaches that client alone, as it is.
	for i, x := range cls {
		push := string([]byte{'p', byte('0' + i), '\r'})
		x.srv.Write([]byte(push))
		select {
		case got := <-x.got:
			if got != push {
				t.Fatalf("client %d got %q, want %q", i, got, push)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("client %d: the peer's bytes did not come back", i)
		}
	}
	// A later read of the client goes on the same connection.
	cls[0].s.Handle(cls[0].s.Message([]byte("more")))
	buf := make([]byte, 16)
	cls[0].srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := cls[0].srv.Read(buf); err != nil || string(buf[:n]) != "more" {
		t.Fatalf("second read %q %v", buf[:n], err)
	}
	for _, x := range cls {
		x.srv.Close()
	}
}
