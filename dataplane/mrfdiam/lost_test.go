package mrfdiam

import (
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// TestRetransmissionAction: a peer connection that closes with a request
// in flight: retransmit routes it again (to the route's next peer),
// busy and unable answer it from the virtual (3004, 3002).
func TestRetransmissionAction(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action mrf.LostAction
		origin string
		result uint32
	}{
		{"retransmit", mrf.LostRetransmit, "peer-b.example", diammsg.ResultSuccess},
		{"busy", mrf.LostBusy, "lb.example", diammsg.ResultTooBusy},
		{"unable", mrf.LostUnable, "lb.example", diammsg.ResultUnableToDeliver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := func(name string) *diamtest.Server {
				s, err := diamtest.Start("127.144.4.2:0", name, false)
				if err != nil {
					t.Skipf("cannot listen: %v", err)
				}
				t.Cleanup(s.Close)
				return s
			}
			a, b := start("peer-a.example"), start("peer-b.example")
			a.Silent(true) // it keeps the request, then goes away
			pa, pb := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
			rt := &mrf.Route{Name: "r", Peers: []*mrf.Peer{pa, pb}}
			cfg := &mrf.Config{Proto: &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example"}, Routes: []*mrf.Route{rt},
				Peers: map[string]*mrf.Peer{}, OnLost: tc.action, MaxRetransmit: 1}
			r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr())}}, nil)
			t.Cleanup(r.Close)
			c := newClient(r)
			c.send(t, request("s;1", "realm-a", 300))
			deadline := time.Now().Add(15 * time.Second)
			for !hasRequest(a) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			a.Close()
			m := c.next(t)
			if m.HopByHop() != 300 || string(m.Get(diammsg.AVPOriginHost)) != tc.origin || result(m) != tc.result {
				t.Fatalf("answer hbh %d from %q result %d, want %q %d", m.HopByHop(), m.Get(diammsg.AVPOriginHost), result(m), tc.origin, tc.result)
			}
		})
	}
}

func hasRequest(s *diamtest.Server) bool {
	for _, g := range s.Got() {
		if g.Code == 272 {
			return true
		}
	}
	return false
}
