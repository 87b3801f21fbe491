package mrfdiam

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mrf"
)

// env gives each pool one address and dials it for real.
type env struct{ pools map[string]netip.AddrPort }

func (e env) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	a, ok := e.pools[pool]
	for _, x := range avoid {
		if x == a {
			return netip.AddrPort{}, false
		}
	}
	return a, ok
}

func (e env) Dial(_ string, addr netip.AddrPort, _ netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	return c, nil, err
}

// client is a session whose client is the test: what the virtual writes
// to it arrives on got.
type client struct {
	s   *mrf.Session
	got chan []byte
}

func newClient(r *mrf.Router) *client {
	c := &client{got: make(chan []byte, 64)}
	c.s = r.NewSession(func(b []byte) error { c.got <- append([]byte(nil), b...); return nil }, nil)
	return c
}

// send runs one message of the client's as the L4 flow does.
func (c *client) send(t *testing.T, raw []byte) {
	t.Helper()
	if handled, _ := c.s.Local(raw); handled {
		return
	}
	c.s.Handle(c.s.Message(raw))
}

func (c *client) next(t *testing.T) diammsg.Msg {
	t.Helper()
	select {
	case b := <-c.got:
		m, err := diammsg.Parse(b)
		if err != nil {
			t.Fatalf("the virtual wrote a malformed message: %v", err)
		}
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("no message from the virtual")
	}
	return diammsg.Msg{}
}

func result(m diammsg.Msg) uint32 {
	rc := m.Get(diammsg.AVPResultCode)
	if len(rc) != 4 {
		return 0
	}
	return binary.BigEndian.Uint32(rc)
}

func request(session, realm string, hbh uint32) []byte {
	return diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, hbh, hbh, diamtest.RequestTo("client.example", session, realm, ""))
}

func listen(t *testing.T, name string) *diamtest.Server {
	t.Helper()
	s, err := diamtest.Start("127.138.3.1:0", name, false)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func newRouter(t *testing.T, sess *Session, pools map[string]netip.AddrPort, routes ...*mrf.Route) *mrf.Router {
	cfg := &mrf.Config{Proto: sess, Routes: routes, Peers: map[string]*mrf.Peer{}, DefaultPool: "pdef"}
	r := mrf.NewRouter(cfg, env{pools}, nil)
	t.Cleanup(r.Close)
	return r
}

func TestLocalAnswers(t *testing.T) {
	s := &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", ProductName: "openltm", VendorID: 3375, HostIP: netip.MustParseAddr("127.138.3.9")}
	cer := diammsg.Build(diammsg.FlagRequest, diammsg.CmdCapabilitiesExchange, 0, 7, 8,
		diammsg.AppendAVP(nil, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(4)))
	dwr := diammsg.Build(diammsg.FlagRequest, diammsg.CmdDeviceWatchdog, 0, 9, 9, nil)
	dpr := diammsg.Build(diammsg.FlagRequest, diammsg.CmdDisconnectPeer, 0, 10, 10, nil)
	for _, tc := range []struct {
		name     string
		in       []byte
		fromPeer bool
		handled  bool
		end      bool
		code     uint32
		app      bool
	}{
		{"client CER", cer, false, true, false, diammsg.CmdCapabilitiesExchange, true},
		{"client DWR", dwr, false, true, false, diammsg.CmdDeviceWatchdog, false},
		{"client DPR", dpr, false, true, true, diammsg.CmdDisconnectPeer, false},
		{"peer DWR", dwr, true, true, false, diammsg.CmdDeviceWatchdog, false},
		{"peer CER", cer, true, true, true, 0, false},
		{"request", request("s", "r", 1), false, false, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, handled, end := s.Local(nil, tc.in, tc.fromPeer)
			if handled != tc.handled || end != tc.end {
				t.Fatalf("handled %t end %t, want %t %t", handled, end, tc.handled, tc.end)
			}
			if tc.code == 0 {
				if reply != nil {
					t.Fatalf("a reply: %x", reply)
				}
				return
			}
			m, err := diammsg.Parse(reply)
			if err != nil {
				t.Fatal(err)
			}
			in, _ := diammsg.Parse(tc.in)
			if m.Request() || m.Code() != tc.code || m.HopByHop() != in.HopByHop() || result(m) != diammsg.ResultSuccess ||
				string(m.Get(diammsg.AVPOriginHost)) != "lb.example" || string(m.Get(diammsg.AVPOriginRealm)) != "lb-realm.example" {
				t.Fatalf("reply %x", reply)
			}
			if tc.app {
				if a, ok := diammsg.AddressOf(m.Get(diammsg.AVPHostIPAddress)); !ok || a.String() != "127.138.3.9" {
					t.Fatalf("Host-IP-Address %v", a)
				}
				s.NoHostIP = true // host-ip-address disabled
				r2, _, _ := s.Local(nil, tc.in, false)
				s.NoHostIP = false
				if m2, _ := diammsg.Parse(r2); m2.Get(diammsg.AVPHostIPAddress) != nil {
					t.Fatal("Host-IP-Address with host-ip-address disabled")
				}
				if id := m.Get(diammsg.AVPAuthAppID); len(id) != 4 || binary.BigEndian.Uint32(id) != 4 {
					t.Fatalf("Auth-Application-Id %x, want the client's 4", id)
				}
			}
		})
	}
}

func TestMatchKey(t *testing.T) {
	s := &Session{}
	for _, tc := range []struct {
		i          int
		route, msg string
		want       bool
	}{
		{KeyDestRealm, "Realm-A.example", "realm-a.example", true},
		{KeyDestRealm, "realm-a.example", "realm-b.example", false},
		{KeyApp, "4", "4", true},
		{KeyApp, "04", "4", true},
		{KeyApp, "4", "16777238", false},
		{KeyApp, "x", "4", false},
	} {
		if got := s.MatchKey(tc.i, tc.route, tc.msg); got != tc.want {
			t.Errorf("MatchKey(%d, %q, %q) = %t", tc.i, tc.route, tc.msg, got)
		}
	}
}

// TestRouting: requests by realm to their peers over one connection per
// peer, answers back to the client that asked with its own hop-by-hop
// identifier (two clients chose the same ones), the virtual's CER on
// each peer connection, and a peer
// nobody listens on answered DIAMETER_UNABLE_TO_DELIVER.
func TestRouting(t *testing.T) {
	a, b, def := listen(t, "peer-a.example"), listen(t, "peer-b.example"), listen(t, "default.example")
	dead, err := net.Listen("tcp", "127.138.3.1:0")
	if err != nil {
		t.Skip(err)
	}
	deadAddr := netip.MustParseAddrPort(dead.Addr().String())
	dead.Close()
	pools := map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr()),
		"pdef": netip.MustParseAddrPort(def.Addr()), "pdead": deadAddr}
	pa, pb, pd := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}, &mrf.Peer{Name: "peer_dead", Pool: "pdead"}
	rt := func(name, realm string, p *mrf.Peer) *mrf.Route {
		r := &mrf.Route{Name: name, Peers: []*mrf.Peer{p}}
		r.Keys[KeyDestRealm] = realm
		return r
	}
	sess := &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true}
	r := newRouter(t, sess, pools, rt("r_a", "realm-a", pa), rt("r_b", "realm-b", pb), rt("r_dead", "realm-dead", pd))
	c1, c2 := newClient(r), newClient(r)
	for _, tc := range []struct {
		realm  string
		origin string
		result uint32
	}{
		{"realm-a", "peer-a.example", diammsg.ResultSuccess},
		{"realm-b", "peer-b.example", diammsg.ResultSuccess},
		{"other", "default.example", diammsg.ResultSuccess},
		{"realm-dead", "lb.example", diammsg.ResultUnableToDeliver},
	} {
		t.Run(tc.realm, func(t *testing.T) {
			for i, c := range []*client{c1, c2} {
				c.send(t, request("s;"+tc.realm, tc.realm, 100)) // the same identifier on both
				m := c.next(t)
				if m.Request() || m.HopByHop() != 100 || string(m.Get(diammsg.AVPOriginHost)) != tc.origin || result(m) != tc.result {
					t.Fatalf("client %d: answer hbh %d origin %q result %d", i, m.HopByHop(), m.Get(diammsg.AVPOriginHost), result(m))
				}
				if tc.result == diammsg.ResultUnableToDeliver && m.Flags()&diammsg.FlagError == 0 {
					t.Fatal("no E flag on the error answer")
				}
			}
		})
	}
	for _, s := range []*diamtest.Server{a, b, def} {
		cers, reqs := 0, 0
		for _, g := range s.Got() {
			switch g.Code {
			case diammsg.CmdCapabilitiesExchange:
				cers++
				if g.Origin != "lb.example" {
					t.Errorf("CER from %q", g.Origin)
				}
			case 272:
				reqs++
				if g.Origin != "client.example" {
					t.Errorf("request's Origin-Host %q, want the client's", g.Origin)
				}
			}
		}
		if cers != 1 || reqs != 2 {
			t.Errorf("a peer got %d CERs and %d requests, want 1 and 2 (one shared connection)", cers, reqs)
		}
	}
	if n := r.C.ConnsOpened.Load(); n != 3 {
		t.Errorf("%d peer connections opened, want 3", n)
	}
}

func TestRewrites(t *testing.T) {
	s := &Session{OriginHostRewrite: "lb.example", OriginRealmRewrite: "lb-realm.example", DestRealmRewrite: "members.example"}
	req := request("s;1", "realm-a", 7)
	var bufs [2][]byte
	out, key := s.Outbound(&bufs, &mrf.Message{Data: req}, 42)
	m, err := diammsg.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if key != 42 || m.HopByHop() != 42 || string(m.Get(diammsg.AVPOriginHost)) != "lb.example" ||
		string(m.Get(diammsg.AVPOriginRealm)) != "lb-realm.example" || string(m.Get(diammsg.AVPDestinationRealm)) != "members.example" {
		t.Fatalf("forwarded %x (key %d)", out, key)
	}
	if in, _ := diammsg.Parse(req); in.HopByHop() != 7 || string(in.Get(diammsg.AVPOriginHost)) != "client.example" {
		t.Fatal("the client's request changed")
	}
	ans := diammsg.AppendAnswer(nil, m, diammsg.ResultSuccess, []byte("peer"), []byte("peer-realm"), nil)
	a := &mrf.Message{Data: ans}
	s.Inbound(a, &mrf.Message{Data: req})
	am, err := diammsg.Parse(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	if am.HopByHop() != 7 || string(am.Get(diammsg.AVPOriginHost)) != "lb.example" || string(am.Get(diammsg.AVPOriginRealm)) != "lb-realm.example" {
		t.Fatalf("answer back %x", a.Data)
	}
}

// BenchmarkMessage is one request and its answer through the protocol's
// per-message work: classify, forward, match the answer, give it back.
func BenchmarkMessage(b *testing.B) {
	s := &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example"}
	req := request("s;1", "realm-a", 7)
	ans := diammsg.AppendAnswer(nil, diammsg.Msg{Raw: req}, diammsg.ResultSuccess, []byte("peer"), []byte("realm"), nil)
	m := &mrf.Message{Data: req}
	a := &mrf.Message{Data: ans}
	var bufs [2][]byte
	var keys mrf.RouteKeys
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = s.Classify(req)
		keys = s.RouteKeys(m)
		out, key := s.Outbound(&bufs, m, uint64(i))
		binary.BigEndian.PutUint32(ans[12:], binary.BigEndian.Uint32(out[12:]))
		if c := s.Classify(ans); c.Key != key {
			b.Fatal("the answer does not match")
		}
		s.Inbound(a, m)
	}
	_ = keys
}

// BenchmarkRouter is a request and its answer through a router and a
// real peer connection (loopback), per message.
func BenchmarkRouter(b *testing.B) {
	srv, err := diamtest.Start("127.138.3.1:0", "peer", false)
	if err != nil {
		b.Skip(err)
	}
	defer srv.Close()
	cfg := &mrf.Config{Proto: &Session{OriginHost: "lb", OriginRealm: "lb"}, Peers: map[string]*mrf.Peer{}, DefaultPool: "p"}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"p": netip.MustParseAddrPort(srv.Addr())}}, nil)
	defer r.Close()
	done := make(chan struct{}, 1)
	var mu sync.Mutex
	s := r.NewSession(func([]byte) error { done <- struct{}{}; return nil }, nil)
	req := request("s;1", "realm", 7)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mu.Lock()
		s.Handle(s.Message(req))
		mu.Unlock()
		<-done
	}
}

// TestPeerGoesDown: requests in flight on a peer connection that ends
// fail (MR_FAILED) and are answered DIAMETER_UNABLE_TO_DELIVER.
func TestPeerGoesDown(t *testing.T) {
	p := listen(t, "silent.example")
	p.Silent(true)
	r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true},
		map[string]netip.AddrPort{"pdef": netip.MustParseAddrPort(p.Addr())})
	c := newClient(r)
	c.send(t, request("s;1", "any", 5))
	for i := 0; i < 100 && len(p.Got()) < 2; i++ { // the CER and the request
		time.Sleep(50 * time.Millisecond)
	}
	p.Close()
	m := c.next(t)
	if m.HopByHop() != 5 || result(m) != diammsg.ResultUnableToDeliver {
		t.Fatalf("answer hbh %d result %d", m.HopByHop(), result(m))
	}
	if r.C.Failed.Load() != 1 {
		t.Fatalf("%d failed, want 1", r.C.Failed.Load())
	}
}
