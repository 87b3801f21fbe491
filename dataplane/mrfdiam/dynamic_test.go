package mrfdiam

import (
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// cer is a client's Capabilities-Exchange-Request as host of realm.
func cer(host, realm string) []byte {
	b := diammsg.AppendAVP(nil, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(host))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte(realm))
	b = diammsg.AppendAVP(b, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(4))
	return diammsg.Build(diammsg.FlagRequest, diammsg.CmdCapabilitiesExchange, 0, 1, 1, b)
}

// TestDynamicRoutes: a client's CER makes its connection a route
// (dynamic-route-insertion); another client's request naming that
// client as Destination-Host, or its realm as Destination-Realm, goes
// on that connection before the static routes (dynamic-route-lookup),
// with a hop-by-hop identifier of the virtual's, and the client's
// answer goes back to the sender with its own identifier. Without
// lookup, or once the route's connection closed or its timeout passed,
// the static route takes the request.
func TestDynamicRoutes(t *testing.T) {
	static, err := diamtest.Start("127.155.1.1:0", "static.example", false)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(static.Close)
	ps := &mrf.Peer{Name: "peer_s", Pool: "ps"}
	rt := &mrf.Route{Name: "r_s", Peers: []*mrf.Peer{ps}}
	pools := map[string]netip.AddrPort{"ps": netip.MustParseAddrPort(static.Addr())}
	for _, tc := range []struct {
		name           string
		insert, lookup bool
		ttl            time.Duration
		idle           time.Duration
		host, realm    string
		dynamic        bool
	}{
		{name: "by Destination-Host", insert: true, lookup: true, host: "PCEF-1.example", realm: "elsewhere.example", dynamic: true},
		{name: "by Destination-Realm", insert: true, lookup: true, realm: "Edge.Example", dynamic: true},
		{name: "a host nobody is, realm elsewhere", insert: true, lookup: true, host: "pcef-9.example", realm: "elsewhere.example"},
		{name: "lookup disabled", insert: true, host: "pcef-1.example"},
		{name: "insertion disabled", lookup: true, host: "pcef-1.example"},
		{name: "within the timeout", insert: true, lookup: true, ttl: time.Hour, host: "pcef-1.example", dynamic: true},
		{name: "past the timeout", insert: true, lookup: true, ttl: 50 * time.Millisecond, idle: 300 * time.Millisecond, host: "pcef-1.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true,
				DynInsert: tc.insert, DynLookup: tc.lookup, DynTTL: tc.ttl}, pools, rt)
			pcef, sender := newClient(r), newClient(r)
			pcef.send(t, cer("pcef-1.example", "edge.example"))
			if m := pcef.next(t); m.Code() != diammsg.CmdCapabilitiesExchange || result(m) != diammsg.ResultSuccess {
				t.Fatalf("CEA %d result %d", m.Code(), result(m))
			}
			if tc.idle > 0 {
				time.Sleep(tc.idle)
			}
			if got := len(r.DynamicRoutes()); got != map[bool]int{true: 1}[tc.insert && tc.idle == 0] {
				t.Fatalf("%d dynamic routes listed", got)
			}
			const hbh = 777
			sender.send(t, diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 258, 4, hbh, hbh,
				diamtest.RequestTo("pcrf.example", "rar;"+tc.name, tc.realm, tc.host)))
			if !tc.dynamic {
				if m := sender.next(t); m.HopByHop() != hbh || string(m.Get(diammsg.AVPOriginHost)) != "static.example" {
					t.Fatalf("answer hbh %d from %q, want the static peer's", m.HopByHop(), m.Get(diammsg.AVPOriginHost))
				}
				return
			}
			req := pcef.next(t)
			if !req.Request() || req.Code() != 258 || string(req.Get(diammsg.AVPSessionID)) != "rar;"+tc.name {
				t.Fatalf("the client got %d (request %t) %q", req.Code(), req.Request(), req.Get(diammsg.AVPSessionID))
			}
			ans := diammsg.AppendAnswer(nil, req, diammsg.ResultSuccess, []byte("pcef-1.example"), []byte("edge.example"), nil)
			pcef.send(t, ans)
			if m := sender.next(t); m.Request() || m.HopByHop() != hbh || string(m.Get(diammsg.AVPOriginHost)) != "pcef-1.example" ||
				result(m) != diammsg.ResultSuccess {
				t.Fatalf("answer hbh %d from %q result %d", m.HopByHop(), m.Get(diammsg.AVPOriginHost), result(m))
			}
		})
	}
}

// TestDynamicRouteClosed: a request routed to a client's connection
// that closes before answering is answered DIAMETER_UNABLE_TO_DELIVER
// (retransmission-action unable), and the route goes with the
// connection: the next request takes the static route.
func TestDynamicRouteClosed(t *testing.T) {
	static, err := diamtest.Start("127.155.1.2:0", "static.example", false)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(static.Close)
	ps := &mrf.Peer{Name: "peer_s", Pool: "ps"}
	r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true, DynInsert: true, DynLookup: true},
		map[string]netip.AddrPort{"ps": netip.MustParseAddrPort(static.Addr())}, &mrf.Route{Name: "r_s", Peers: []*mrf.Peer{ps}})
	r.Config().OnLost = mrf.LostUnable
	pcef, sender := newClient(r), newClient(r)
	pcef.send(t, cer("pcef-1.example", "edge.example"))
	pcef.next(t)
	sender.send(t, diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 258, 4, 5, 5, diamtest.RequestTo("pcrf.example", "rar;1", "edge.example", "pcef-1.example")))
	pcef.next(t)
	pcef.s.Close()
	if m := sender.next(t); m.HopByHop() != 5 || result(m) != diammsg.ResultUnableToDeliver || string(m.Get(diammsg.AVPOriginHost)) != "lb.example" {
		t.Fatalf("answer hbh %d result %d from %q", m.HopByHop(), result(m), m.Get(diammsg.AVPOriginHost))
	}
	if n := len(r.DynamicRoutes()); n != 0 {
		t.Fatalf("%d dynamic routes after the close", n)
	}
	sender.send(t, diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 258, 4, 6, 6, diamtest.RequestTo("pcrf.example", "rar;2", "edge.example", "pcef-1.example")))
	if m := sender.next(t); m.HopByHop() != 6 || string(m.Get(diammsg.AVPOriginHost)) != "static.example" {
		t.Fatalf("answer hbh %d from %q, want the static peer's", m.HopByHop(), m.Get(diammsg.AVPOriginHost))
	}
}

// TestDynamicRoutingOverride: a rule's per-connection insertion
// (DIAMETER::dynamic_route_insertion, mrf.Session.SetDynamicRouting)
// makes the connection's route at the client's next watchdog though the
// profile's insertion is disabled, and takes it away again; lookup
// follows the connection's own setting too.
func TestDynamicRoutingOverride(t *testing.T) {
	r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true, DynLookup: true}, nil)
	pcef := newClient(r)
	pcef.send(t, cer("pcef-1.example", "edge.example"))
	pcef.next(t)
	if n := len(r.DynamicRoutes()); n != 0 {
		t.Fatalf("%d routes with insertion disabled", n)
	}
	dwr := diammsg.Build(diammsg.FlagRequest, diammsg.CmdDeviceWatchdog, 0, 9, 9, nil)
	pcef.s.SetDynamicRouting("insertion", true)
	pcef.send(t, dwr)
	pcef.next(t)
	if rs := r.DynamicRoutes(); len(rs) != 1 || rs[0].Host != "pcef-1.example" || rs[0].Realm != "edge.example" {
		t.Fatalf("routes %+v", rs)
	}
	if ins, look := pcef.s.DynamicRouting(); !ins || !look {
		t.Fatalf("insertion %v lookup %v", ins, look)
	}
	pcef.s.SetDynamicRouting("lookup", false)
	if _, look := pcef.s.DynamicRouting(); look {
		t.Fatal("lookup still on")
	}
	pcef.s.SetDynamicRouting("insertion", false)
	pcef.send(t, dwr)
	pcef.next(t)
	if n := len(r.DynamicRoutes()); n != 0 {
		t.Fatalf("%d routes once insertion was turned off", n)
	}
}

// TestDynamicRoutesListed: the routes listed for show are ordered by
// host, name the address each client connected from, and count the
// time a route has left under dynamic-route-timeout (-1 without one).
func TestDynamicRoutesListed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{
		{"no timeout", 0},
		{"an hour", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true,
				DynInsert: true, DynLookup: true, DynTTL: tc.ttl}, nil)
			for _, c := range []struct{ host, addr string }{{"pcef-2.example", "127.211.5.2"}, {"pcef-1.example", "127.211.5.1"}} {
				cl := newClient(r)
				cl.s.SetClient(netip.MustParseAddr(c.addr))
				cl.send(t, cer(c.host, "edge.example"))
				cl.next(t)
			}
			rs := r.DynamicRoutes()
			if len(rs) != 2 || rs[0].Host != "pcef-1.example" || rs[1].Host != "pcef-2.example" {
				t.Fatalf("routes %+v", rs)
			}
			for i, want := range []string{"127.211.5.1", "127.211.5.2"} {
				d := rs[i]
				if d.Client != netip.MustParseAddr(want) || d.Realm != "edge.example" || d.Idle < 0 {
					t.Errorf("route %d: %+v, want client %s", i, d, want)
				}
				if tc.ttl == 0 && d.Left != -1 || tc.ttl > 0 && (d.Left <= 0 || d.Left > tc.ttl || d.Left+d.Idle != tc.ttl) {
					t.Errorf("route %d: left %v idle %v with timeout %v", i, d.Left, d.Idle, tc.ttl)
				}
			}
		})
	}
}
