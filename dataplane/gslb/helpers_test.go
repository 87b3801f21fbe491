package gslb

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// The test topology, after seed 001: two datacenters, each reached over
// two ISP links (cnc and ct), one LTM server per datacenter with one
// virtual server per link.
//
//	dc-bj  link bj-cnc (prober 127.0.81.1)  vs_cnc 127.0.81.11:80
//	       link bj-ct  (prober 127.0.81.2)  vs_ct  127.0.81.12:80
//	dc-gz  link gz-cnc (prober 127.0.82.1)  vs_cnc 127.0.82.11:80
//	       link gz-ct  (prober 127.0.82.2)  vs_ct  127.0.82.12:80
//
// LDNS clients live in 127.0.85.0/24 (cnc users) and 127.0.86.0/24 (ct).

var (
	bjCNC = netip.MustParseAddr("127.0.81.11")
	bjCT  = netip.MustParseAddr("127.0.81.12")
	gzCNC = netip.MustParseAddr("127.0.82.11")
	gzCT  = netip.MustParseAddr("127.0.82.12")

	ldnsCNC  = netip.MustParseAddr("127.0.85.1")
	ldnsCNC2 = netip.MustParseAddr("127.0.85.2")
	ldnsCT   = netip.MustParseAddr("127.0.86.1")
)

const wideName = "www.example.com."

func testConfig(listen netip.AddrPort) *Config {
	a := netip.MustParseAddr
	vsOn := func(name string, addr netip.Addr, link string) *VirtualServer {
		return &VirtualServer{Name: name, Destination: netip.AddrPortFrom(addr, 80), Link: link}
	}
	cfg := &Config{
		Datacenters: map[string]*Datacenter{
			"/Common/dc-bj": {Name: "/Common/dc-bj"},
			"/Common/dc-gz": {Name: "/Common/dc-gz"},
		},
		Links: map[string]*Link{
			"/Common/bj-cnc": {Name: "/Common/bj-cnc", Datacenter: "/Common/dc-bj", Prober: a("127.0.81.1")},
			"/Common/bj-ct":  {Name: "/Common/bj-ct", Datacenter: "/Common/dc-bj", Prober: a("127.0.81.2")},
			"/Common/gz-cnc": {Name: "/Common/gz-cnc", Datacenter: "/Common/dc-gz", Prober: a("127.0.82.1")},
			"/Common/gz-ct":  {Name: "/Common/gz-ct", Datacenter: "/Common/dc-gz", Prober: a("127.0.82.2")},
		},
		Servers: map[string]*Host{
			"/Common/bj-ltm": {Name: "/Common/bj-ltm", Datacenter: "/Common/dc-bj", Addresses: []netip.Addr{a("127.0.81.1")},
				VirtualServers: []*VirtualServer{vsOn("vs_cnc", bjCNC, "/Common/bj-cnc"), vsOn("vs_ct", bjCT, "/Common/bj-ct")}},
			"/Common/gz-ltm": {Name: "/Common/gz-ltm", Datacenter: "/Common/dc-gz", Addresses: []netip.Addr{a("127.0.82.1")},
				VirtualServers: []*VirtualServer{vsOn("vs_cnc", gzCNC, "/Common/gz-cnc"), vsOn("vs_ct", gzCT, "/Common/gz-ct")}},
		},
		Pools: map[string]*Pool{
			"/Common/app_pool": {Name: "/Common/app_pool", Members: []PoolMember{
				{Server: "/Common/bj-ltm", VirtualServer: "vs_cnc", Order: 0},
				{Server: "/Common/bj-ltm", VirtualServer: "vs_ct", Order: 1},
				{Server: "/Common/gz-ltm", VirtualServer: "vs_cnc", Order: 2},
				{Server: "/Common/gz-ltm", VirtualServer: "vs_ct", Order: 3},
			}},
		},
		WideIPs: map[string]*WideIP{
			"/Common/www.example.com": {Name: "/Common/www.example.com", Aliases: []string{"app.example.com", "*.cdn.example.com"},
				Pools: []WideIPPool{{Pool: "/Common/app_pool"}}},
		},
		Zones: []Zone{{Origin: "example.com", Data: testZone}},
	}
	if listen.IsValid() {
		cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen}}
	}
	return cfg
}

const testZone = `$TTL 300
@       IN SOA ns1.example.com. hostmaster.example.com. 2024010101 3600 600 86400 60
@       IN NS  ns1.example.com.
@       IN NS  ns2.example.com.
@       IN MX  10 mail.example.com.
ns1     IN A   127.0.80.1
ns2     IN A   127.0.80.2
mail    IN A   127.0.80.25
static  IN A   127.0.80.80
alias   IN CNAME static.example.com.
deep.er.name IN TXT "x"
sub     IN NS  ns.sub.example.com.
ns.sub  IN A   127.0.80.3
`

// freeAddr picks a port free for both UDP and TCP on addr.
func freeAddr(t testing.TB, addr string) netip.AddrPort {
	t.Helper()
	for i := 0; i < 50; i++ {
		u, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(addr), 0)))
		if err != nil {
			t.Fatal(err)
		}
		ap := u.LocalAddr().(*net.UDPAddr).AddrPort()
		l, err := net.Listen("tcp", ap.String())
		u.Close()
		if err == nil {
			l.Close()
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
	t.Fatal("no free port")
	return netip.AddrPort{}
}

func newServer(t testing.TB, cfg *Config, opts Options) *Server {
	t.Helper()
	s := New(opts)
	t.Cleanup(func() { s.Close() })
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	return s
}

// ask resolves name over the server's Answer path (no sockets) from src.
func ask(t testing.TB, s *Server, src netip.Addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	m, send := s.Answer(q, src, true)
	if !send {
		return nil
	}
	return m
}

// askA returns the first A of an answer, or the zero Addr.
func askA(t testing.TB, s *Server, src netip.Addr, name string) netip.Addr {
	t.Helper()
	m := ask(t, s, src, name, dns.TypeA)
	if m == nil {
		return netip.Addr{}
	}
	as := gslbtest.Addrs(m)
	if len(as) == 0 {
		return netip.Addr{}
	}
	return as[0]
}

func queryNet(t testing.TB, src netip.Addr, srv netip.AddrPort, network, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m, err := gslbtest.Query(src, srv, network, name, qtype, 2*time.Second)
	if err != nil {
		t.Fatalf("%s query %s from %s: %v", network, name, src, err)
	}
	return m
}

func count(t testing.TB, s *Server, src netip.Addr, n int) map[netip.Addr]int {
	t.Helper()
	got := map[netip.Addr]int{}
	for i := 0; i < n; i++ {
		got[askA(t, s, src, wideName)]++
	}
	return got
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
