package mrfdiam

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// startPeer runs a Diameter peer named name on the package's test
// addresses.
func startPeer(t *testing.T, addr, name string) *diamtest.Server {
	t.Helper()
	s, err := diamtest.Start(addr, name, false)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func count(s *diamtest.Server, code uint32) int {
	n := 0
	for _, g := range s.Got() {
		if g.Code == code {
			n++
		}
	}
	return n
}

// waitFor polls ok, bounded in time.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchdog: a peer connection the virtual hears nothing on is sent
// DWRs; a peer that answers them keeps its connection, one that stops
// answering has it closed after max-watchdog-failures unanswered DWRs,
// and the request it held is sent again to the route's next peer
// (retransmission-action retransmit).
func TestWatchdog(t *testing.T) {
	a := startPeer(t, "127.148.1.1:0", "peer-a.example")
	b := startPeer(t, "127.148.1.2:0", "peer-b.example")
	pa, pb := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
	cfg := &mrf.Config{Proto: &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example"},
		Routes: []*mrf.Route{{Name: "r", Peers: []*mrf.Peer{pa, pb}}}, Peers: map[string]*mrf.Peer{},
		OnLost: mrf.LostRetransmit, MaxRetransmit: 1, Watchdog: 200 * time.Millisecond, MaxWatchdogFailures: 2}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr())}}, nil)
	t.Cleanup(r.Close)
	c := newClient(r)

	c.send(t, request("s;1", "realm", 100))
	if m := c.next(t); string(m.Get(diammsg.AVPOriginHost)) != "peer-a.example" || result(m) != diammsg.ResultSuccess {
		t.Fatalf("first answer from %q result %d, want peer-a.example's success", m.Get(diammsg.AVPOriginHost), result(m))
	}
	// peer-a answers the watchdog while it is healthy.
	waitFor(t, "peer-a's DWRs", func() bool { return count(a, diammsg.CmdDeviceWatchdog) >= 2 })
	if n := r.C.WatchdogClosed.Load(); n != 0 {
		t.Fatalf("%d connections closed by the watchdog while the peer answered", n)
	}
	// Then it hangs: its DWRs and the request go unanswered.
	a.Silent(true)
	c.send(t, request("s;2", "realm", 200))
	m := c.next(t)
	if m.HopByHop() != 200 || string(m.Get(diammsg.AVPOriginHost)) != "peer-b.example" || result(m) != diammsg.ResultSuccess {
		t.Fatalf("answer hbh %d from %q result %d, want 200 from peer-b.example", m.HopByHop(), m.Get(diammsg.AVPOriginHost), result(m))
	}
	if r.C.WatchdogClosed.Load() != 1 || r.C.WatchdogFailed.Load() < 2 || r.C.WatchdogSent.Load() < 4 {
		t.Fatalf("watchdog counts sent %d failed %d closed %d, want >=4 >=2 1", r.C.WatchdogSent.Load(), r.C.WatchdogFailed.Load(), r.C.WatchdogClosed.Load())
	}
}

// TestPersistAVP: with persist-type avp, every request of one Session-Id
// (from whichever client) goes to the peer the session's first request
// went to, though the route balances sessions over both peers (ratio).
func TestPersistAVP(t *testing.T) {
	a := startPeer(t, "127.148.1.3:0", "peer-a.example")
	b := startPeer(t, "127.148.1.4:0", "peer-b.example")
	pa, pb := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
	for _, tc := range []struct {
		name    string
		persist mrf.PersistBy
		avp     uint32
	}{{"session-id", mrf.PersistAVP, 0}, {"user-name", mrf.PersistAVP, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &mrf.Config{Proto: &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", PersistAVP: tc.avp},
				Routes: []*mrf.Route{{Name: "r", Ratio: true, Peers: []*mrf.Peer{pa, pb}}}, Peers: map[string]*mrf.Peer{},
				Persist: tc.persist}
			r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr())}}, nil)
			t.Cleanup(r.Close)
			clients := []*client{newClient(r), newClient(r), newClient(r)}
			where := map[string]string{}
			used := map[string]bool{}
			hbh := uint32(1)
			for round := range 3 {
				for i, c := range clients {
					for _, sess := range []string{"s;1", "s;2", "s;3", "s;4"} {
						req := request(sess, "realm", hbh)
						if tc.avp == 1 {
							// The sessions differ; the user is the key.
							m := diammsg.Msg{Raw: req}
							req = m.Insert(nil, 1, diammsg.AVPFlagMandatory, 0, []byte("user-"+sess))
							req = diammsg.Msg{Raw: req}.Set(nil, diammsg.AVPSessionID, []byte(sess+string(rune('a'+i))+string(rune('0'+round))))
						}
						c.send(t, req)
						m := c.next(t)
						if m.HopByHop() != hbh || result(m) != diammsg.ResultSuccess {
							t.Fatalf("answer hbh %d result %d, want %d success", m.HopByHop(), result(m), hbh)
						}
						hbh++
						who := string(m.Get(diammsg.AVPOriginHost))
						used[who] = true
						if w, ok := where[sess]; ok && w != who {
							t.Fatalf("client %d round %d: %s went to %s, its first request to %s", i, round, sess, who, w)
						}
						where[sess] = who
					}
				}
			}
			if len(used) != 2 {
				t.Fatalf("the sessions went to %v, want both peers", used)
			}
		})
	}
}

// busyPeer is a Diameter peer that takes the CER and answers every
// request DIAMETER_TOO_BUSY (3004); it counts the requests it got. Its
// connections end as the router closes its side.
func busyPeer(t *testing.T, addr string) (netip.AddrPort, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	var got atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := diammsg.Reader{R: c}
				for {
					raw, err := rd.Next()
					if err != nil {
						return
					}
					m, err := diammsg.Parse(raw)
					if err != nil || !m.Request() {
						continue
					}
					rc := uint32(diammsg.ResultTooBusy)
					if m.Code() == diammsg.CmdCapabilitiesExchange || m.Code() == diammsg.CmdDeviceWatchdog {
						rc = diammsg.ResultSuccess
					} else {
						got.Add(1)
					}
					if _, err := c.Write(diammsg.AppendAnswer(nil, m, rc, []byte("busy.example"), []byte("members.example"), nil)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), &got
}

// TestRetryResultCodes: an answer whose Result-Code is one of
// array-retransmission-result-codes sends its request to the route's
// next peer (retransmission-action retransmit, max-retransmissions
// left); with none left, or another code, the answer goes back.
func TestRetryResultCodes(t *testing.T) {
	busy, got := busyPeer(t, "127.148.1.5:0")
	b := startPeer(t, "127.148.1.6:0", "peer-b.example")
	for _, tc := range []struct {
		name   string
		codes  []uint32
		max    int
		origin string
		result uint32
	}{
		{"retried", []uint32{3002, 3004}, 1, "peer-b.example", diammsg.ResultSuccess},
		{"none left", []uint32{3004}, 0, "busy.example", diammsg.ResultTooBusy},
		{"other code", []uint32{3002}, 1, "busy.example", diammsg.ResultTooBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa, pb := &mrf.Peer{Name: "busy", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
			cfg := &mrf.Config{Proto: &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", RetryCodes: tc.codes},
				Routes: []*mrf.Route{{Name: "r", Peers: []*mrf.Peer{pa, pb}}}, Peers: map[string]*mrf.Peer{},
				OnLost: mrf.LostRetransmit, MaxRetransmit: tc.max, Persist: mrf.PersistAVP}
			r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": busy, "pb": netip.MustParseAddrPort(b.Addr())}}, nil)
			t.Cleanup(r.Close)
			c := newClient(r)
			before := got.Load()
			c.send(t, request("s;1", "realm", 77))
			m := c.next(t)
			if m.HopByHop() != 77 || string(m.Get(diammsg.AVPOriginHost)) != tc.origin || result(m) != tc.result {
				t.Fatalf("answer hbh %d from %q result %d, want %q %d", m.HopByHop(), m.Get(diammsg.AVPOriginHost), result(m), tc.origin, tc.result)
			}
			if got.Load() != before+1 {
				t.Fatalf("the busy peer got %d requests, want 1", got.Load()-before)
			}
		})
	}
}
