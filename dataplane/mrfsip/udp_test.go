package mrfsip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// TestSessionSwitches: loop-detection answers 482 to a request that
// carries the virtual's own Via (and only then), maintenance-mode 503 to
// what would begin something new (an ACK, a CANCEL, a request inside a
// dialog go on), each only when enabled.
func TestSessionSwitches(t *testing.T) {
	s := New(&Session{InsertVia: true, Host: "127.147.4.1:5060", Salt: 7})
	var bufs [2][]byte
	ours, _ := s.Outbound(&bufs, &mrf.Message{Data: req("OPTIONS", "a", "z9hG4bK-1", "c1", 70, false)}, 5)
	ours = append([]byte(nil), ours...)
	other := New(&Session{InsertVia: true, Host: "127.147.4.2:5060", Salt: 8})
	theirs, _ := other.Outbound(&bufs, &mrf.Message{Data: req("OPTIONS", "a", "z9hG4bK-1", "c1", 70, false)}, 5)
	theirs = append([]byte(nil), theirs...)
	for _, tc := range []struct {
		name        string
		loop, maint bool
		in          []byte
		reply       string
	}{
		{"our Via, loop detection", true, false, ours, "SIP/2.0 482 Loop Detected\r\n"},
		{"our Via, no loop detection", false, false, ours, ""},
		{"another virtual's Via", true, false, theirs, ""},
		{"the client's Via alone", true, false, req("INVITE", "a", "z9hG4bK-9", "c", 70, false), ""},
		{"maintenance: a new INVITE", false, true, req("INVITE", "a", "b1", "c", 70, false), "SIP/2.0 503 Service Unavailable\r\n"},
		{"maintenance: a REGISTER", false, true, req("REGISTER", "a", "b1", "c", 70, false), "SIP/2.0 503 "},
		{"maintenance: in a dialog", false, true, req("BYE", "a", "b1", "c", 70, true), ""},
		{"maintenance: an ACK", false, true, req("ACK", "a", "b1", "c", 70, false), ""},
		{"maintenance: a CANCEL", false, true, req("CANCEL", "a", "b1", "c", 70, false), ""},
		{"no maintenance", false, false, req("INVITE", "a", "b1", "c", 70, false), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := New(&Session{InsertVia: true, Host: "127.147.4.1:5060", Salt: 7, LoopDetect: tc.loop, Maintenance: tc.maint})
			reply, handled, end := x.Local(nil, tc.in, false)
			if end || handled != (tc.reply != "") || !strings.HasPrefix(string(reply), tc.reply) {
				t.Fatalf("handled %t end %t reply %q, want %q", handled, end, reply, tc.reply)
			}
			if reply, handled, _ := x.Local(nil, tc.in, true); handled || reply != nil {
				t.Fatal("a peer's message was answered")
			}
		})
	}
}

// TestIgnoreVia: with honor-via disabled a response is matched by its
// Call-ID and CSeq, whatever its Vias say; with it, by the Via.
func TestIgnoreVia(t *testing.T) {
	in := req("INVITE", "alice", "z9hG4bK-1", "call-1", 70, false)
	for _, tc := range []struct {
		name   string
		ignore bool
		match  bool // a response whose top Via was rewritten still matches
	}{
		{"honor-via enabled", false, false},
		{"honor-via disabled", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&Session{InsertVia: true, Host: "127.147.4.1:5060", Salt: 3, IgnoreVia: tc.ignore})
			var bufs [2][]byte
			out, key := s.Outbound(&bufs, &mrf.Message{Data: in}, 9)
			m, _ := sipmsg.Parse(append([]byte(nil), out...))
			resp := sipmsg.Reject(&m, 200, "OK")
			if c := s.Classify(resp); !c.Answer || c.Key != key {
				t.Fatalf("the response as sent: key %x, want %x", c.Key, key)
			}
			mangled := []byte(strings.Replace(string(resp), "branch=z9hG4bK-ltm", "branch=z9hG4bK-other", 1))
			if c := s.Classify(mangled); (c.Key == key) != tc.match {
				t.Fatalf("a response with another top Via matched %t, want %t", c.Key == key, tc.match)
			}
			other := []byte(strings.Replace(string(resp), "call-1", "call-2", 1))
			if c := s.Classify(other); tc.ignore && c.Key == key {
				t.Fatal("another call's response matched")
			}
		})
	}
}

// TestOutboundUDP: over a UDP link the Via is SIP/2.0/UDP at the link's
// own address with rport, its branch the virtual's; a custom-via stays
// as configured; over TCP it is the virtual's. The UDP virtual's
// Record-Route names no transport.
func TestOutboundUDP(t *testing.T) {
	local := netip.MustParseAddrPort("127.147.4.9:40000")
	in := req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false)
	for _, tc := range []struct {
		name   string
		s      *Session
		link   *mrf.Link
		via, r string
	}{
		{"udp link", &Session{InsertVia: true, RecordRoute: true, UDP: true, Host: "127.147.4.1:5060"}, &mrf.Link{UDP: true, Local: local},
			"SIP/2.0/UDP 127.147.4.9:40000;rport;branch=z9hG4bK-ltm", "<sip:127.147.4.1:5060;lr>"},
		{"tcp link", &Session{InsertVia: true, RecordRoute: true, Host: "127.147.4.1:5060"}, &mrf.Link{},
			"SIP/2.0/TCP 127.147.4.1:5060;branch=z9hG4bK-ltm", "<sip:127.147.4.1:5060;transport=tcp;lr>"},
		{"custom via", &Session{InsertVia: true, CustomVia: "SIP/2.0/UDP sbc.example:5060", Host: "127.147.4.1:5060"}, &mrf.Link{UDP: true, Local: local},
			"SIP/2.0/UDP sbc.example:5060;branch=z9hG4bK-ltm", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.s)
			var bufs [2][]byte
			msg := &mrf.Message{Data: in}
			out, key := s.OutboundOn(tc.link, &bufs, msg, 77)
			m, err := sipmsg.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if v := string(m.TopVia()); !strings.HasPrefix(v, tc.via) {
				t.Fatalf("top Via %q, want %q...", v, tc.via)
			}
			if rr, _ := m.Header(sipmsg.NewField("Record-Route")); string(rr) != tc.r {
				t.Fatalf("Record-Route %q, want %q", rr, tc.r)
			}
			resp := sipmsg.Reject(&m, 180, "Ringing")
			if c := s.Classify(resp); c.Key != key || c.Final {
				t.Fatalf("the response classified %+v, want key %d", c, key)
			}
			a := &mrf.Message{Data: resp}
			s.Inbound(a, msg)
			if am, _ := sipmsg.Parse(a.Data); am.Count(sipmsg.Via) != 1 {
				t.Fatalf("the response back keeps the virtual's Via: %q", a.Data)
			}
		})
	}
}

// udpPeer is a SIP member over UDP: it answers every request but an ACK
// with 200 OK (an INVITE with 100 first) to where it came from, and
// counts the flows it heard from.
type udpPeer struct {
	c     *net.UDPConn
	flows atomic.Int32
	got   atomic.Int32
}

func newUDPPeer(t testing.TB, addr string) *udpPeer {
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	p := &udpPeer{c: c}
	t.Cleanup(func() { c.Close() })
	go func() {
		seen := map[netip.AddrPort]bool{}
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if !seen[from] {
				seen[from] = true
				p.flows.Add(1)
			}
			m, err := sipmsg.Parse(buf[:n])
			if err != nil || !m.Request || string(m.Method) == "ACK" {
				continue
			}
			p.got.Add(1)
			if string(m.Method) == "INVITE" {
				c.WriteToUDPAddrPort(sipmsg.Reject(&m, 100, "Trying"), from)
			}
			c.WriteToUDPAddrPort(sipmsg.Reject(&m, 200, "OK"), from)
		}
	}()
	return p
}

func (p *udpPeer) addr() netip.AddrPort { return p.c.LocalAddr().(*net.UDPAddr).AddrPort() }

// udpEnv dials UDP peers (and TCP ones, as env does).
type udpEnv struct{ env }

func (e udpEnv) DialUDP(_ string, addr netip.AddrPort, _ netip.Addr) (net.Conn, func(), error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	return c, nil, err
}

var _ mrf.DatagramDialer = udpEnv{}

// udpRouter is a UDP virtual's router: route r_alice to pa, r_dead to a
// port nobody listens on, the rest to pdef.
func udpRouter(t testing.TB, a, def netip.AddrPort, dead netip.AddrPort) *mrf.Router {
	pa := &mrf.Peer{Name: "peer_a", Pool: "pa"}
	pd := &mrf.Peer{Name: "peer_dead", Pool: "pdead"}
	ra := &mrf.Route{Name: "r_alice", Peers: []*mrf.Peer{pa}}
	ra.Keys[KeyRequest] = "alice"
	rd := &mrf.Route{Name: "r_dead", Peers: []*mrf.Peer{pd}}
	rd.Keys[KeyRequest] = "dead"
	cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, MaxForwards: true, Respond: true, UDP: true, Host: "127.147.4.1:5060", Salt: 1}),
		Routes: []*mrf.Route{ra, rd}, Peers: map[string]*mrf.Peer{}, DefaultPool: "pdef", UDP: true, Idle: time.Minute}
	r := mrf.NewRouter(cfg, udpEnv{env{map[string]netip.AddrPort{"pa": a, "pdef": def, "pdead": dead}}}, nil)
	t.Cleanup(r.Close)
	return r
}

// TestUDPRouting: a UDP virtual's clients' requests go by route or
// pool over one UDP flow per peer, shared; each client gets its own
// answers, provisional and final; a peer nobody listens on fails the
// request (503 with generate-response-on-failure).
func TestUDPRouting(t *testing.T) {
	a, def := newUDPPeer(t, "127.147.4.11:0"), newUDPPeer(t, "127.147.4.12:0")
	dead := newUDPPeer(t, "127.147.4.13:0")
	deadAddr := dead.addr()
	dead.c.Close() // nobody listens there now: the kernel answers port unreachable
	r := udpRouter(t, a.addr(), def.addr(), deadAddr)
	type client struct {
		s   *mrf.Session
		got chan []byte
	}
	var cs [3]*client
	for i := range cs {
		c := &client{got: make(chan []byte, 16)}
		c.s = r.NewSession(func(b []byte) error { c.got <- append([]byte(nil), b...); return nil }, nil)
		cs[i] = c
	}
	expect := func(c *client, i int, what, br string, want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case b := <-c.got:
				m, err := sipmsg.Parse(b)
				if err != nil || !strings.HasPrefix(string(b), w) || m.Count(sipmsg.Via) != 1 || !strings.Contains(string(m.TopVia()), br) {
					t.Fatalf("client %d %s: got %q, want %q", i, what, b, w)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("client %d %s: no %q", i, what, w)
			}
		}
	}
	for round := range 3 {
		for _, user := range []string{"alice", "dave"} {
			for i, c := range cs {
				br := fmt.Sprintf("z9hG4bK-%s-%d-%d", user, i, round)
				c.s.Handle(c.s.Message(req("INVITE", user, br, br, 70, false)))
			}
			for i, c := range cs {
				br := fmt.Sprintf("z9hG4bK-%s-%d-%d", user, i, round)
				expect(c, i, user, br, "SIP/2.0 100 ", "SIP/2.0 200 ")
			}
		}
	}
	if a.flows.Load() != 1 || def.flows.Load() != 1 || a.got.Load() != 9 || def.got.Load() != 9 {
		t.Fatalf("peer flows %d and %d, requests %d and %d; want 1 flow and 9 requests each", a.flows.Load(), def.flows.Load(), a.got.Load(), def.got.Load())
	}
	c := cs[0]
	c.s.Handle(c.s.Message(req("OPTIONS", "dead", "z9hG4bK-d", "cd", 70, false)))
	expect(c, 0, "dead", "z9hG4bK-d", "SIP/2.0 503 ")
	if r.C.Failed.Load() != 1 || r.C.FailAnswered.Load() != 1 {
		t.Fatalf("failed %d answered %d", r.C.Failed.Load(), r.C.FailAnswered.Load())
	}
}

// TestUDPNoDialer: a UDP peer of a router whose Env opens no UDP flows
// fails its requests.
func TestUDPNoDialer(t *testing.T) {
	cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, Respond: true, Host: "127.147.4.1:5060"}), Peers: map[string]*mrf.Peer{},
		DefaultPool: "p", UDP: true}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"p": netip.MustParseAddrPort("127.147.4.14:5060")}}, nil)
	t.Cleanup(r.Close)
	got := make(chan []byte, 1)
	s := r.NewSession(func(b []byte) error { got <- append([]byte(nil), b...); return nil }, nil)
	s.Handle(s.Message(req("OPTIONS", "x", "z9hG4bK-1", "c", 70, false)))
	select {
	case b := <-got:
		if !strings.HasPrefix(string(b), "SIP/2.0 503 ") {
			t.Fatalf("got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

// BenchmarkUDPDatagram is one client datagram's whole way through a UDP
// virtual's router and back: the request read as a message, classified,
// routed, forwarded with the virtual's Via on the shared peer flow; the
// peer's response read, matched, its Via taken off and written to the
// client. (The test peer's answer costs one allocation of its own.)
func BenchmarkUDPDatagram(b *testing.B) {
	a := newUDPPeer(b, "127.147.4.21:0")
	r := udpRouter(b, a.addr(), a.addr(), a.addr())
	got := make(chan struct{}, 1)
	s := r.NewSession(func([]byte) error { got <- struct{}{}; return nil }, nil)
	in := req("OPTIONS", "alice", "z9hG4bK-1", "c1", 70, false)
	t := time.NewTimer(time.Hour)
	round := func() {
		s.Handle(s.Message(in))
		t.Reset(20 * time.Second)
		select {
		case <-got:
		case <-t.C:
			b.Fatal(errors.New("no answer"))
		}
	}
	round() // the peer flow opens
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		round()
	}
}
