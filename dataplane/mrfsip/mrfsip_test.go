package mrfsip

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

func req(method, user, branch, callID string, maxFwd int, toTag bool) []byte {
	to := "<sip:" + user + "@example.net>"
	if toTag {
		to += ";tag=x"
	}
	return []byte(fmt.Sprintf("%s sip:%s@example.net SIP/2.0\r\nVia: SIP/2.0/TCP 192.0.2.1:5060;branch=%s\r\nMax-Forwards: %d\r\n"+
		"From: <sip:caller@example.com>;tag=c\r\nTo: %s\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContent-Length: 0\r\n\r\n",
		method, user, branch, maxFwd, to, callID, method))
}

func TestOutboundInbound(t *testing.T) {
	s := New(&Session{InsertVia: true, RecordRoute: true, MaxForwards: true, Host: "127.138.4.1:5060", Salt: 99})
	for _, tc := range []struct {
		name     string
		in       []byte
		rr       bool
		maxFwd   string
		provisnl bool
	}{
		{"INVITE opens a dialog", req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false), true, "69", true},
		{"in-dialog BYE", req("BYE", "alice", "z9hG4bK-2", "c1", 10, true), false, "9", false},
		{"OPTIONS", req("OPTIONS", "bob", "z9hG4bK-3", "c2", 1, false), false, "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bufs [2][]byte
			msg := &mrf.Message{Data: tc.in}
			out, key := s.Outbound(&bufs, msg, 12345)
			m, err := sipmsg.Parse(out)
			if err != nil {
				t.Fatalf("forwarded message: %v", err)
			}
			if v := string(m.TopVia()); !strings.HasPrefix(v, "SIP/2.0/TCP 127.138.4.1:5060;branch=z9hG4bK-ltm") {
				t.Fatalf("top Via %q", v)
			}
			if m.Count(sipmsg.Via) != 2 {
				t.Fatal("the client's Via is gone")
			}
			if _, ok := m.Header(sipmsg.NewField("Record-Route")); ok != tc.rr {
				t.Fatalf("Record-Route %t, want %t", ok, tc.rr)
			}
			if v, _ := m.Header(sipmsg.MaxForwards); string(v) != tc.maxFwd {
				t.Fatalf("Max-Forwards %q, want %s", v, tc.maxFwd)
			}
			// The peer's answers carry its Via back: they match the
			// request's key, and lose the virtual's Via on the way out.
			for _, code := range []int{100, 200} {
				ans := sipmsg.Reject(&m, code, "X")
				c := s.Classify(ans)
				if !c.Answer || c.Key != key || c.Final != (code >= 200) {
					t.Fatalf("%d classified %+v, want key %d", code, c, key)
				}
				a := &mrf.Message{Data: ans}
				s.Inbound(a, msg)
				am, err := sipmsg.Parse(a.Data)
				if err != nil {
					t.Fatal(err)
				}
				if am.Count(sipmsg.Via) != 1 || !bytes.Contains(am.TopVia(), []byte("192.0.2.1")) {
					t.Fatalf("answer back keeps %q", am.TopVia())
				}
			}
		})
	}
}

func TestLocalAndFailed(t *testing.T) {
	s := New(&Session{InsertVia: true, MaxForwards: true, Respond: true, Host: "127.138.4.1:5060"})
	for _, tc := range []struct {
		name    string
		in      []byte
		handled bool
		reply   string
	}{
		{"ping", []byte("\r\n\r\n"), true, "\r\n"},
		{"pong", []byte("\r\n"), true, ""},
		{"no hops left", req("OPTIONS", "a", "b1", "c", 0, false), true, "SIP/2.0 483 Too Many Hops\r\n"},
		{"hops left", req("OPTIONS", "a", "b1", "c", 1, false), false, ""},
		{"ACK with no hops", req("ACK", "a", "b1", "c", 0, true), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, handled, end := s.Local(nil, tc.in, false)
			if handled != tc.handled || end || !strings.HasPrefix(string(reply), tc.reply) || (tc.reply == "") != (reply == nil) {
				t.Fatalf("handled %t end %t reply %q", handled, end, reply)
			}
		})
	}
	if f := s.Failed(&mrf.Message{Data: req("INVITE", "a", "b", "c", 70, false)}); !strings.HasPrefix(string(f), "SIP/2.0 503 ") {
		t.Fatalf("failure answer %q", f)
	}
	if f := s.Failed(&mrf.Message{Data: req("ACK", "a", "b", "c", 70, false)}); f != nil {
		t.Fatal("an ACK was answered")
	}
}

func TestMatchKey(t *testing.T) {
	s := &Session{}
	for _, tc := range []struct {
		route, msg string
		want       bool
	}{
		{"sip:alice@example.net", "sip:alice@example.net", true},
		{"sip:alice@example.net", "SIP:Alice@Example.net;transport=tcp", true},
		{"alice@example.net", "sip:alice@example.net", true},
		{"alice", "sip:alice@example.net", true},
		{"example.net", "sip:alice@example.net", true},
		{"bob", "sip:alice@example.net", false},
		{"sip:alice@example.org", "sip:alice@example.net", false},
	} {
		if got := s.MatchKey(KeyRequest, tc.route, tc.msg); got != tc.want {
			t.Errorf("MatchKey(%q, %q) = %t", tc.route, tc.msg, got)
		}
	}
}

// peer is a SIP member: 100 and 200 to an INVITE, nothing to an ACK,
// 200 to the others; it counts its connections and what it got.
type peer struct {
	ln    net.Listener
	conns atomic.Int32
	mu    sync.Mutex
	got   []string
	calls []string // METHOD Call-ID of each request
}

func newPeer(t *testing.T) *peer { return newPeerAt(t, "127.138.4.1:0") }

func newPeerAt(t *testing.T, addr string) *peer {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	p := &peer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			go func() {
				defer c.Close()
				rd := mrf.Reader{R: c, F: &mblb.SIPFramer{}}
				for {
					b, err := rd.Next()
					if err != nil {
						return
					}
					m, err := sipmsg.Parse(b)
					if err != nil || !m.Request {
						continue
					}
					p.mu.Lock()
					p.got = append(p.got, string(m.Method)+" "+string(m.TopVia()))
					cid, _ := m.Header(sipmsg.CallID)
					p.calls = append(p.calls, string(m.Method)+" "+string(cid))
					p.mu.Unlock()
					switch string(m.Method) {
					case "ACK":
					case "INVITE":
						c.Write(sipmsg.Reject(&m, 100, "Trying"))
						c.Write(sipmsg.Reject(&m, 200, "OK"))
					default:
						c.Write(sipmsg.Reject(&m, 200, "OK"))
					}
				}
			}()
		}
	}()
	return p
}

func (p *peer) addr() netip.AddrPort { return netip.MustParseAddrPort(p.ln.Addr().String()) }

type env struct{ pools map[string]netip.AddrPort }

func (e env) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	a, ok := e.pools[pool]
	return a, ok && len(avoid) == 0
}

func (e env) Dial(_ string, addr netip.AddrPort, _ netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	return c, nil, err
}

// TestRouting: requests by route (request-uri) or the virtual's pool,
// over one connection per peer that two clients share; each client gets
// its own responses, provisional and final, with its own Via alone.
func TestRouting(t *testing.T) {
	a, def := newPeer(t), newPeer(t)
	pa := &mrf.Peer{Name: "peer_a", Pool: "pa"}
	rt := &mrf.Route{Name: "r_alice", Peers: []*mrf.Peer{pa}}
	rt.Keys[KeyRequest] = "alice"
	cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, MaxForwards: true, Host: "127.138.4.1:5060", Salt: 1}),
		Routes: []*mrf.Route{rt}, Peers: map[string]*mrf.Peer{}, DefaultPool: "pdef"}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": a.addr(), "pdef": def.addr()}}, nil)
	t.Cleanup(r.Close)
	type client struct {
		s   *mrf.Session
		got chan []byte
	}
	var cs [2]*client
	for i := range cs {
		c := &client{got: make(chan []byte, 16)}
		c.s = r.NewSession(func(b []byte) error { c.got <- append([]byte(nil), b...); return nil }, nil)
		cs[i] = c
	}
	for _, user := range []string{"alice", "dave"} {
		for i, c := range cs {
			br := fmt.Sprintf("z9hG4bK-%s-%d", user, i)
			c.s.Handle(c.s.Message(req("INVITE", user, br, br, 70, false)))
			for _, want := range []string{"SIP/2.0 100 ", "SIP/2.0 200 "} {
				select {
				case b := <-c.got:
					m, err := sipmsg.Parse(b)
					if err != nil || !strings.HasPrefix(string(b), want) || m.Count(sipmsg.Via) != 1 || !strings.Contains(string(m.TopVia()), br) {
						t.Fatalf("client %d %s: got %q", i, user, b)
					}
				case <-time.After(15 * time.Second):
					t.Fatalf("client %d %s: no %s", i, user, want)
				}
			}
			c.s.Handle(c.s.Message(req("ACK", user, br+"a", br, 70, true)))
		}
	}
	if a.conns.Load() != 1 || def.conns.Load() != 1 {
		t.Fatalf("peer connections %d and %d, want 1 each", a.conns.Load(), def.conns.Load())
	}
	for _, p := range []*peer{a, def} {
		for i := 0; i < 50; i++ { // the ACKs are one-way: wait for them
			p.mu.Lock()
			n := len(p.got)
			p.mu.Unlock()
			if n == 4 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		p.mu.Lock()
		if len(p.got) != 4 {
			t.Errorf("a peer got %q, want 2 INVITEs and 2 ACKs", p.got)
		}
		p.mu.Unlock()
	}
}

// BenchmarkMessage is one request and its final response through the
// protocol's per-message work: classify, route fields, forward with the
// virtual's Via, match the response, take the Via off.
func BenchmarkMessage(b *testing.B) {
	s := New(&Session{InsertVia: true, MaxForwards: true, Host: "127.138.4.1:5060"})
	in := req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false)
	var bufs [2][]byte
	m := &mrf.Message{Data: in}
	out, _ := s.Outbound(&bufs, m, 1)
	fm, _ := sipmsg.Parse(append([]byte(nil), out...))
	resp := sipmsg.Reject(&fm, 200, "OK")
	a := &mrf.Message{}
	buf := make([]byte, 0, len(resp))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = s.Classify(in)
		_ = s.RouteKeys(m)
		_, key := s.Outbound(&bufs, m, 1)
		if c := s.Classify(resp); c.Key != key {
			b.Fatal("the response does not match")
		}
		a.Data = append(buf[:0], resp...)
		s.Inbound(a, m)
	}
}

// TestMaxHeaders: max-msg-header-count drops a message with more header
// fields than it allows, and lets one at the bound through.
func TestMaxHeaders(t *testing.T) {
	s := New(&Session{InsertVia: true, Host: "127.162.5.1:5060", MaxHeaders: 7})
	m := req("OPTIONS", "alice", "z9hG4bK-1", "c1", 70, false) // 7 fields
	if c := s.Classify(m); c.Bad {
		t.Fatalf("7 fields: %+v", c)
	}
	more := bytes.Replace(m, []byte("Content-Length"), []byte("X-One: 1\r\nContent-Length"), 1)
	if c := s.Classify(more); !c.Bad {
		t.Fatalf("8 fields: %+v", c)
	}
	if c := New(&Session{Host: "127.162.5.1:5060"}).Classify(more); c.Bad {
		t.Fatalf("no bound: %+v", c)
	}
	if n := testing.AllocsPerRun(100, func() { s.Classify(m) }); n != 0 {
		t.Fatalf("%v allocations a message", n)
	}
}
