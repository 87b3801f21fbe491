package mrfdiam

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// TestDestinationHost: a request whose Destination-Host is the
// Origin-Host a peer gave in its CEA goes on that peer's open
// connection, whatever the routes say (the host's case aside); a host no
// open connection has is routed by the routes.
func TestDestinationHost(t *testing.T) {
	start := func(name string) *diamtest.Server {
		s, err := diamtest.Start("127.144.4.1:0", name, false)
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a, b := start("peer-a.example"), start("peer-b.example")
	pa, pb := &mrf.Peer{Name: "peer_a", Pool: "pa"}, &mrf.Peer{Name: "peer_b", Pool: "pb"}
	ra := &mrf.Route{Name: "r_a", Peers: []*mrf.Peer{pa}}
	ra.Keys[KeyDestRealm] = "realm-a"
	rb := &mrf.Route{Name: "r_b", Peers: []*mrf.Peer{pb}}
	rb.Keys[KeyDestRealm] = "realm-b"
	r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true},
		map[string]netip.AddrPort{"pa": netip.MustParseAddrPort(a.Addr()), "pb": netip.MustParseAddrPort(b.Addr())}, ra, rb)
	c := newClient(r)
	for i, tc := range []struct {
		name, realm, host, want string
	}{
		{"by route, before b is known", "realm-a", "peer-b.example", "peer-a.example"},
		{"opens b's connection", "realm-b", "", "peer-b.example"},
		{"by Destination-Host", "realm-a", "peer-b.example", "peer-b.example"},
		{"by Destination-Host, another case", "realm-a", "Peer-B.Example", "peer-b.example"},
		{"a host nobody is", "realm-a", "peer-z.example", "peer-a.example"},
	} {
		hbh := uint32(200 + i)
		c.send(t, diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, hbh, hbh, diamtest.RequestTo("client.example", "s;"+tc.name, tc.realm, tc.host)))
		m := c.next(t)
		if m.HopByHop() != hbh || result(m) != diammsg.ResultSuccess || string(m.Get(diammsg.AVPOriginHost)) != tc.want {
			t.Fatalf("%s: answer hbh %d result %d from %q, want %q", tc.name, m.HopByHop(), result(m), m.Get(diammsg.AVPOriginHost), tc.want)
		}
	}
}
