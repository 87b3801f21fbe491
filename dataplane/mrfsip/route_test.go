package mrfsip

import (
	"bufio"
	"bytes"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// withRoute is req with Route fields (one line each) after its Via.
func withRoute(b []byte, routes ...string) []byte {
	var add string
	for _, r := range routes {
		add += "Route: " + r + "\r\n"
	}
	return bytes.Replace(b, []byte("Max-Forwards:"), []byte(add+"Max-Forwards:"), 1)
}

// TestLoopModes: a request that comes back with the virtual's Via (under
// another proxy's) is a loop in both modes; one that comes back to
// another Request-URI (it spiralled) is a loop under loose only.
func TestLoopModes(t *testing.T) {
	for _, strict := range []bool{false, true} {
		s := New(&Session{InsertVia: true, LoopDetect: true, LoopStrict: strict, Host: "127.156.1.1:5060", Salt: 5})
		var bufs [2][]byte
		out, _ := s.Outbound(&bufs, &mrf.Message{Data: req("INVITE", "alice", "z9hG4bK-c1", "c1", 70, false)}, 3)
		back := append([]byte(nil), out...)
		// Another proxy sends it back, its own Via on top.
		back = bytes.Replace(back, []byte("Via: "), []byte("Via: SIP/2.0/TCP 192.0.2.50:5060;branch=z9hG4bK-p\r\nVia: "), 1)
		spiral := bytes.Replace(back, []byte("INVITE sip:alice@"), []byte("INVITE sip:bob@"), 1)
		for _, tc := range []struct {
			name string
			in   []byte
			loop bool
		}{
			{"looped", back, true},
			{"spiralled", spiral, !strict},
			{"the client's own", req("INVITE", "alice", "z9hG4bK-c2", "c2", 70, false), false},
		} {
			reply, handled, _ := s.Local(nil, tc.in, false)
			if handled != tc.loop || tc.loop && !strings.HasPrefix(string(reply), "SIP/2.0 482 Loop Detected\r\n") {
				t.Errorf("strict %t, %s: handled %t reply %q", strict, tc.name, handled, reply)
			}
		}
		// The branch's number still matches the responses.
		m, _ := sipmsg.Parse(out)
		if c := s.Classify(sipmsg.Reject(&m, 200, "OK")); !c.Answer || c.Key != 3 {
			t.Errorf("strict %t: the response's key %d", strict, c.Key)
		}
	}
}

// TestNextHop: the hop a request's Route fields name, the virtual's own
// value taken off, and the request as it leaves (loose: the Route
// values left as they are; strict: the hop's URI as the Request-URI,
// the Request-URI last among the Routes).
func TestNextHop(t *testing.T) {
	const self = "<sip:127.156.1.1:5060;transport=tcp;lr>"
	for _, tc := range []struct {
		name, uri  string
		routes     []string
		strict     bool
		hop        string // "" none
		wantURI    string
		wantRoutes string // the Route values as they leave, | between
		off        bool   // honor-route-header disabled
	}{
		{name: "own then hop", routes: []string{self, "<sip:127.156.1.20:5070;lr>"}, hop: "127.156.1.20:5070",
			wantURI: "sip:alice@example.net", wantRoutes: "<sip:127.156.1.20:5070;lr>"},
		{name: "one field, two values", routes: []string{self + ", <sip:127.156.1.20;lr>"}, hop: "127.156.1.20:5060",
			wantURI: "sip:alice@example.net", wantRoutes: "<sip:127.156.1.20;lr>"},
		{name: "hop alone", routes: []string{"<sip:127.156.1.21:5080;lr>", "<sip:127.156.1.22;lr>"}, hop: "127.156.1.21:5080",
			wantURI: "sip:alice@example.net", wantRoutes: "<sip:127.156.1.21:5080;lr>|<sip:127.156.1.22;lr>"},
		{name: "strict", routes: []string{self, "<sip:127.156.1.20:5070>", "<sip:127.156.1.23>"}, strict: true, hop: "127.156.1.20:5070",
			wantURI: "sip:127.156.1.20:5070", wantRoutes: "<sip:127.156.1.23>|<sip:alice@example.net>"},
		{name: "own alone", routes: []string{self}, wantURI: "sip:alice@example.net", wantRoutes: ""},
		{name: "a name is not resolved", routes: []string{"<sip:proxy.example.net;lr>"}, wantURI: "sip:alice@example.net", wantRoutes: "<sip:proxy.example.net;lr>"},
		{name: "sent by a strict router", uri: "sip:127.156.1.1:5060", routes: []string{"<sip:127.156.1.24>", "<sip:carol@example.net>"}, hop: "127.156.1.24:5060",
			wantURI: "sip:carol@example.net", wantRoutes: "<sip:127.156.1.24>"},
		{name: "a user at the virtual's address", uri: "sip:dave@127.156.1.1:5060", routes: []string{self, "<sip:127.156.1.20:5070;lr>"}, hop: "127.156.1.20:5070",
			wantURI: "sip:dave@127.156.1.1:5060", wantRoutes: "<sip:127.156.1.20:5070;lr>"},
		{name: "disabled", off: true, routes: []string{self, "<sip:127.156.1.20:5070;lr>"},
			wantURI: "sip:alice@example.net", wantRoutes: self + "|<sip:127.156.1.20:5070;lr>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&Session{InsertVia: true, Host: "127.156.1.1:5060", HonorRoute: !tc.off, StrictRoute: tc.strict})
			in := withRoute(req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false), tc.routes...)
			if tc.uri != "" {
				in = bytes.Replace(in, []byte("sip:alice@example.net SIP/2.0"), []byte(tc.uri+" SIP/2.0"), 1)
			}
			msg := &mrf.Message{Data: in}
			hop, ok := s.NextHop(msg)
			if ok != (tc.hop != "") || ok && hop.String() != tc.hop {
				t.Fatalf("hop %v %t, want %q", hop, ok, tc.hop)
			}
			var bufs [2][]byte
			out, _ := s.Outbound(&bufs, msg, 1)
			m, err := sipmsg.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			m.EachValue(sipmsg.Route, func(v []byte) bool { got = append(got, string(v)); return true })
			if string(m.URI) != tc.wantURI || strings.Join(got, "|") != tc.wantRoutes {
				t.Fatalf("left as %q with Routes %q\n%s", m.URI, got, out)
			}
			if !bytes.Equal(msg.Data, in) {
				t.Fatal("the routed message changed")
			}
		})
	}
}

// dialEnv dials for real, from src when given.
type dialEnv struct{ pools map[string]netip.AddrPort }

func (e dialEnv) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	a, ok := e.pools[pool]
	return a, ok && len(avoid) == 0
}

func (e dialEnv) Dial(_ string, addr netip.AddrPort, src netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if src.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	c, err := d.Dial("tcp", addr.String())
	return c, func() {}, err
}

// TestHonorRouteRouting: with honor-route-header a client's request goes
// to the hop its Route names (a member of no pool), its own Route value
// off; without a Route, to the virtual's pool.
func TestHonorRouteRouting(t *testing.T) {
	def, hop := newPeerAt(t, "127.156.1.2:0"), newPeerAt(t, "127.156.1.3:0")
	cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, MaxForwards: true, HonorRoute: true, Host: "127.156.1.1:5060", Salt: 2}),
		Peers: map[string]*mrf.Peer{}, DefaultPool: "pdef"}
	r := mrf.NewRouter(cfg, dialEnv{map[string]netip.AddrPort{"pdef": def.addr()}}, nil)
	t.Cleanup(r.Close)
	got := make(chan []byte, 16)
	s := r.NewSession(func(b []byte) error { got <- append([]byte(nil), b...); return nil }, nil)
	routed := withRoute(req("OPTIONS", "alice", "z9hG4bK-r1", "r1", 70, false),
		"<sip:127.156.1.1:5060;transport=tcp;lr>", "<sip:"+hop.addr().String()+";lr>")
	for _, in := range [][]byte{routed, req("OPTIONS", "alice", "z9hG4bK-r2", "r2", 70, false)} {
		s.Handle(s.Message(in))
		select {
		case b := <-got:
			if !strings.HasPrefix(string(b), "SIP/2.0 200 ") {
				t.Fatalf("answer %q", b)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no answer")
		}
	}
	hop.mu.Lock()
	hc := append([]string(nil), hop.calls...)
	hop.mu.Unlock()
	def.mu.Lock()
	dc := append([]string(nil), def.calls...)
	def.mu.Unlock()
	if len(hc) != 1 || hc[0] != "OPTIONS r1" || len(dc) != 1 || dc[0] != "OPTIONS r2" {
		t.Fatalf("the hop got %q, the pool %q", hc, dc)
	}
}

// slowPeer answers each request only once release is closed.
func slowPeer(t *testing.T, addr string, release chan struct{}) netip.AddrPort {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := mrf.Reader{R: c, F: &mblb.SIPFramer{}}
				for {
					b, err := rd.Next()
					if err != nil {
						return
					}
					m, err := sipmsg.Parse(append([]byte(nil), b...))
					if err != nil || !m.Request || string(m.Method) == "ACK" {
						continue
					}
					if string(m.Method) == "INVITE" {
						<-release
					}
					c.Write(sipmsg.Reject(&m, 200, "OK"))
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// TestConnectBackTCP: a response due to a client whose connection has
// ended, or can no longer be written, reaches it over a connection the virtual opens, from its own
// address, to the client's Via; the client's requests on that
// connection are routed too. With do-not-connect-back the response is
// dropped.
func TestConnectBackTCP(t *testing.T) {
	for _, tc := range []struct{ back, ended bool }{{true, true}, {true, false}, {false, true}} {
		back := tc.back
		release := make(chan struct{})
		member := slowPeer(t, "127.156.2.2:0", release)
		// The client listens where its Via says.
		ln, err := net.Listen("tcp", "127.156.2.9:0")
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(func() { ln.Close() })
		accepted := make(chan net.Conn, 4)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, Host: "127.156.2.1:5060", Salt: 4}), Peers: map[string]*mrf.Peer{},
			DefaultPool: "p", ConnectBack: back, Local: netip.MustParseAddr("127.156.2.1")}
		c := &mrf.Counters{}
		r := mrf.NewRouter(cfg, dialEnv{map[string]netip.AddrPort{"p": member}}, c)
		t.Cleanup(r.Close)
		var mu sync.Mutex
		closed := false
		s := r.NewSession(func(b []byte) error {
			mu.Lock()
			defer mu.Unlock()
			if closed {
				return net.ErrClosed
			}
			return nil
		}, nil)
		inv := bytes.Replace(req("INVITE", "alice", "z9hG4bK-cb1", "cb1", 70, false), []byte("192.0.2.1:5060"), []byte(ln.Addr().String()), 1)
		s.Handle(s.Message(inv))
		mu.Lock()
		closed = true
		mu.Unlock()
		if tc.ended {
			s.Close()
		}
		close(release)
		if !back {
			deadline := time.Now().Add(15 * time.Second)
			for c.Dropped.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			select {
			case bc := <-accepted:
				bc.Close()
				t.Fatal("connected back with do-not-connect-back")
			default:
			}
			if c.Dropped.Load() == 0 {
				t.Fatal("the response was not dropped")
			}
			continue
		}
		var bc net.Conn
		select {
		case bc = <-accepted:
		case <-time.After(15 * time.Second):
			t.Fatal("no connection back")
		}
		defer bc.Close()
		if a := bc.RemoteAddr().(*net.TCPAddr); a.IP.String() != "127.156.2.1" {
			t.Errorf("connected back from %v, want the virtual's address", a)
		}
		bc.SetDeadline(time.Now().Add(15 * time.Second))
		br := bufio.NewReader(bc)
		rd := mrf.Reader{R: br, F: &mblb.SIPFramer{}}
		b, err := rd.Next()
		if err != nil || !strings.HasPrefix(string(b), "SIP/2.0 200 ") || !bytes.Contains(b, []byte("Call-ID: cb1")) || bytes.Contains(b, []byte("z9hG4bK-ltm")) {
			t.Fatalf("over the connection back: %q %v", b, err)
		}
		// The client's own request on it is routed and answered there.
		if _, err := bc.Write(req("OPTIONS", "alice", "z9hG4bK-cb2", "cb2", 70, false)); err != nil {
			t.Fatal(err)
		}
		b, err = rd.Next()
		if err != nil || !strings.HasPrefix(string(b), "SIP/2.0 200 ") || !bytes.Contains(b, []byte("Call-ID: cb2")) {
			t.Fatalf("the client's request on it: %q %v", b, err)
		}
	}
}

// TestConnectBackTo: where a response goes back to: the top Via's
// received address or sent-by host, at its sent-by port.
func TestConnectBackTo(t *testing.T) {
	s := New(&Session{Host: "127.156.1.1:5060"})
	for _, tc := range []struct{ via, want string }{
		{"SIP/2.0/TCP 127.156.3.5:5070;branch=z9hG4bK1", "127.156.3.5:5070"},
		{"SIP/2.0/TCP 127.156.3.5;branch=z9hG4bK1", "127.156.3.5:5060"},
		{"SIP/2.0/TCP client.example:5070;received=127.156.3.6;branch=z9hG4bK1", "127.156.3.6:5070"},
		{"SIP/2.0/TCP [::1]:5071;branch=z9hG4bK1", "[::1]:5071"},
		{"SIP/2.0/TCP client.example;branch=z9hG4bK1", ""},
	} {
		resp := []byte("SIP/2.0 200 OK\r\nVia: " + tc.via + "\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n")
		a, ok := s.ConnectBackTo(resp)
		if ok != (tc.want != "") || ok && a.String() != tc.want {
			t.Errorf("%s: %v %t, want %q", tc.via, a, ok, tc.want)
		}
	}
	if _, ok := New(&Session{IgnoreVia: true}).ConnectBackTo([]byte("SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP 127.156.3.5\r\n\r\n")); ok {
		t.Error("honor-via disabled connects back")
	}
}

// TestPassthruUDP: with passthru-mode a datagram that is no SIP message
// is forwarded as it is to the virtual's pool; without, it is dropped.
func TestPassthruUDP(t *testing.T) {
	for _, pass := range []bool{true, false} {
		ln, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.156.4.2:0")))
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(func() { ln.Close() })
		got := make(chan string, 4)
		go func() {
			buf := make([]byte, 2048)
			for {
				n, err := ln.Read(buf)
				if err != nil {
					return
				}
				got <- string(buf[:n])
			}
		}()
		c := &mrf.Counters{}
		cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, UDP: true, Passthru: pass, Host: "127.156.4.1:5060"}), Peers: map[string]*mrf.Peer{},
			DefaultPool: "p", UDP: true, Idle: time.Minute}
		r := mrf.NewRouter(cfg, udpEnv{env{map[string]netip.AddrPort{"p": ln.LocalAddr().(*net.UDPAddr).AddrPort()}}}, c)
		t.Cleanup(r.Close)
		s := r.NewSession(func([]byte) error { return nil }, nil)
		junk := []byte("HELLO not-sip\r\n\r\n")
		s.Handle(s.Message(junk))
		// A SIP request after it: the pool hears it either way, so the
		// junk, when forwarded, came first.
		s.Handle(s.Message(req("OPTIONS", "a", "z9hG4bK-pt", "pt", 70, false)))
		var first string
		select {
		case first = <-got:
		case <-time.After(15 * time.Second):
			t.Fatal("the pool heard nothing")
		}
		if pass && first != string(junk) || !pass && !strings.HasPrefix(first, "OPTIONS ") {
			t.Fatalf("passthru %t: the pool heard %q first", pass, first)
		}
		if !pass && c.Dropped.Load() != 1 {
			t.Fatalf("dropped %d", c.Dropped.Load())
		}
	}
}
