package gslb

import (
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// A wide IP over two datacenters and two links, asked over real UDP and
// TCP: round robin visits the four virtual servers in turn, with the
// pool's TTL, as an authoritative answer; aliases and wildcard aliases
// answer too.
func TestWideIPOverUDPAndTCP(t *testing.T) {
	listen := freeAddr(t, "127.0.80.10")
	s := newServer(t, testConfig(listen), Options{})
	want := []netip.Addr{bjCNC, bjCT, gzCNC, gzCT}
	for _, network := range []string{"udp", "tcp"} {
		got := map[netip.Addr]int{}
		for i := 0; i < 8; i++ {
			m := queryNet(t, ldnsCNC, listen, network, wideName, dns.TypeA)
			if m.Rcode != dns.RcodeSuccess || !m.Authoritative || len(m.Answer) != 1 {
				t.Fatalf("%s: answer %v", network, m)
			}
			if ttl := m.Answer[0].Header().Ttl; ttl != 30 {
				t.Errorf("%s: TTL %d, want the pool's 30", network, ttl)
			}
			got[gslbtest.Addrs(m)[0]]++
		}
		for _, a := range want {
			if got[a] != 2 {
				t.Errorf("%s: round robin gave %v, want each of %v twice", network, got, want)
				break
			}
		}
	}
	for _, name := range []string{"app.example.com.", "img.cdn.example.com.", "WWW.Example.COM."} {
		m := queryNet(t, ldnsCNC, listen, "udp", name, dns.TypeA)
		if len(gslbtest.Addrs(m)) != 1 || m.Answer[0].Header().Name != name {
			t.Errorf("%s: %v", name, m)
		}
	}
	st := s.WideIPs()
	if len(st) != 1 || st[0].Requests != 19 || st[0].Preferred != 19 || st[0].Status.Availability != Available {
		t.Errorf("wide IP stats %+v", st)
	}
}

// A link that is down, disabled or over its bandwidth limit takes its
// virtual servers out; a virtual server at its connection limit gets no
// new users, and gets them again below it.
func TestAvailability(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(s *Server, cfg *Config)
		without []netip.Addr
	}{
		{"link down", func(s *Server, _ *Config) {
			s.SetLinkMetrics("/Common/bj-cnc", LinkMetrics{Status: StatusDown})
		}, []netip.Addr{bjCNC}},
		{"link over total bps", func(s *Server, cfg *Config) {
			cfg.Links["/Common/gz-ct"].LimitTotalBps = 1000000
			s.SetLinkMetrics("/Common/gz-ct", LinkMetrics{InBps: 600000, OutBps: 400000})
		}, []netip.Addr{gzCT}},
		{"link over inbound bps", func(s *Server, cfg *Config) {
			cfg.Links["/Common/gz-ct"].LimitInboundBps = 1000
			s.SetLinkMetrics("/Common/gz-ct", LinkMetrics{InBps: 1000})
		}, []netip.Addr{gzCT}},
		{"link disabled", func(s *Server, cfg *Config) {
			cfg.Links["/Common/bj-ct"].Disabled = true
		}, []netip.Addr{bjCT}},
		{"datacenter disabled", func(s *Server, cfg *Config) {
			cfg.Datacenters["/Common/dc-gz"].Disabled = true
		}, []netip.Addr{gzCNC, gzCT}},
		{"server down", func(s *Server, cfg *Config) {
			s.SetServerStatus("/Common/bj-ltm", StatusDown)
		}, []netip.Addr{bjCNC, bjCT}},
		{"virtual server reported down", func(s *Server, cfg *Config) {
			s.SetVirtualServerMetrics("/Common/gz-ltm", "vs_cnc", VSMetrics{Status: StatusDown})
		}, []netip.Addr{gzCNC}},
		{"virtual server at its connection limit", func(s *Server, cfg *Config) {
			cfg.Servers["/Common/gz-ltm"].VirtualServers[0].LimitMaxConnections = 100
			s.SetVirtualServerMetrics("/Common/gz-ltm", "vs_cnc", VSMetrics{Connections: 100})
		}, []netip.Addr{gzCNC}},
		{"virtual server over its bps limit", func(s *Server, cfg *Config) {
			cfg.Servers["/Common/bj-ltm"].VirtualServers[1].LimitMaxBps = 5000
			s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_ct", VSMetrics{Bps: 9000})
		}, []netip.Addr{bjCT}},
		{"server at its connection limit", func(s *Server, cfg *Config) {
			cfg.Servers["/Common/bj-ltm"].LimitMaxConnections = 50
			s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_cnc", VSMetrics{Connections: 30})
			s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_ct", VSMetrics{Connections: 20})
		}, []netip.Addr{bjCNC, bjCT}},
		{"pool member at its connection limit", func(s *Server, cfg *Config) {
			cfg.Pools["/Common/app_pool"].Members[3].LimitMaxConnections = 10
			s.SetVirtualServerMetrics("/Common/gz-ltm", "vs_ct", VSMetrics{Connections: 11})
		}, []netip.Addr{gzCT}},
		{"pool member disabled", func(s *Server, cfg *Config) {
			cfg.Pools["/Common/app_pool"].Members[0].Disabled = true
		}, []netip.Addr{bjCNC}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			s := New(Options{})
			defer s.Close()
			c.setup(s, cfg)
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			got := count(t, s, ldnsCNC, 12)
			for _, a := range c.without {
				if got[a] != 0 {
					t.Errorf("%v still answered: %v", a, got)
				}
			}
			if len(got) != 4-len(c.without) {
				t.Errorf("answers %v, want the other %d virtual servers", got, 4-len(c.without))
			}
			if _, ok := got[netip.Addr{}]; ok {
				t.Errorf("a query went unanswered: %v", got)
			}
		})
	}
}

// Metrics change between queries: a virtual server back under its limit
// gets users again, a link back up carries them again.
func TestAvailabilityRecovers(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	cfg.Servers["/Common/gz-ltm"].VirtualServers[0].LimitMaxConnections = 100
	s := newServer(t, cfg, Options{})
	s.SetVirtualServerMetrics("/Common/gz-ltm", "vs_cnc", VSMetrics{Connections: 150})
	s.SetLinkMetrics("/Common/bj-cnc", LinkMetrics{Status: StatusDown})
	if got := count(t, s, ldnsCNC, 8); got[gzCNC] != 0 || got[bjCNC] != 0 {
		t.Fatalf("over-limit and link-down virtual servers answered: %v", got)
	}
	var reason string
	for _, sv := range s.Servers() {
		for _, v := range sv.VirtualServers {
			if v.Name == "/Common/gz-ltm:vs_cnc" {
				reason = v.Status.Reason
			}
		}
	}
	if reason != reasonVSConnLimit {
		t.Errorf("reason %q, want %q", reason, reasonVSConnLimit)
	}
	s.SetVirtualServerMetrics("/Common/gz-ltm", "vs_cnc", VSMetrics{Connections: 99})
	s.SetLinkMetrics("/Common/bj-cnc", LinkMetrics{Status: StatusUp})
	if got := count(t, s, ldnsCNC, 8); got[gzCNC] != 2 || got[bjCNC] != 2 {
		t.Fatalf("recovered virtual servers not back in rotation: %v", got)
	}
}

// Everything down: the pool's fallback decides (fallback-ip answers,
// return-to-dns hands the name to the static zone, drop-packet sends
// nothing), and the wide IP counts it.
func TestFallback(t *testing.T) {
	cases := []struct {
		name     string
		fallback Mode
		zone     string // extra record for the wide IP's name
		want     string // "addr:<ip>", "empty", "drop"
	}{
		{"fallback-ip", FallbackIP, "", "addr:127.0.80.99"},
		{"return-to-dns with a static record", ReturnToDNS, "www IN A 127.0.80.77\n", "addr:127.0.80.77"},
		{"return-to-dns without one", ReturnToDNS, "", "empty"},
		{"drop-packet", DropPacket, "", "drop"},
		{"none", None, "", "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			cfg.Zones[0].Data += c.zone
			p := cfg.Pools["/Common/app_pool"]
			p.Mode, p.Alternate, p.Fallback = GlobalAvailability, None, c.fallback
			p.FallbackIP = netip.MustParseAddr("127.0.80.99")
			if c.fallback == DropPacket {
				// drop-packet acts on an available pool whose other
				// methods gave nothing: a dynamic method without metrics.
				p.Mode = LeastConnections
			}
			s := newServer(t, cfg, Options{})
			if c.fallback != DropPacket {
				for _, l := range []string{"/Common/bj-cnc", "/Common/bj-ct", "/Common/gz-cnc", "/Common/gz-ct"} {
					s.SetLinkMetrics(l, LinkMetrics{Status: StatusDown})
				}
			}
			m := ask(t, s, ldnsCNC, wideName, dns.TypeA)
			switch {
			case c.want == "drop":
				if m != nil {
					t.Fatalf("answered %v", m)
				}
				if st := s.WideIPs()[0]; st.Dropped != 1 {
					t.Errorf("dropped %d", st.Dropped)
				}
				return
			case m == nil:
				t.Fatal("dropped")
			case m.Rcode != dns.RcodeSuccess:
				t.Fatalf("rcode %s", dns.RcodeToString[m.Rcode])
			}
			got := gslbtest.Addrs(m)
			if c.want == "empty" {
				if len(got) != 0 {
					t.Errorf("answer %v, want none", got)
				}
				if st := s.WideIPs()[0]; st.ReturnedToDNS != 1 {
					t.Errorf("returned to DNS %d, want 1", st.ReturnedToDNS)
				}
				return
			}
			if len(got) != 1 || "addr:"+got[0].String() != c.want {
				t.Errorf("answer %v, want %s", got, c.want)
			}
		})
	}
}

// A second pool is used when the first has nothing available
// (global-availability between pools), and the last resort pool after
// them all.
func TestPoolOrder(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	cfg.Pools["/Common/bj_pool"] = &Pool{Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_cnc"}}}
	cfg.Pools["/Common/gz_pool"] = &Pool{Members: []PoolMember{{Server: "/Common/gz-ltm", VirtualServer: "vs_ct"}}}
	cfg.Pools["/Common/last"] = &Pool{Mode: FallbackIP, FallbackIP: netip.MustParseAddr("127.0.80.98")}
	w := cfg.WideIPs["/Common/www.example.com"]
	w.PoolLBMode = GlobalAvailability
	w.Pools = []WideIPPool{{Pool: "/Common/gz_pool", Order: 1}, {Pool: "/Common/bj_pool", Order: 0}}
	w.LastResortPool = "/Common/last"
	s := newServer(t, cfg, Options{})
	steps := []struct {
		down string
		want netip.Addr
	}{
		{"", bjCNC},
		{"/Common/bj-cnc", gzCT},
		{"/Common/gz-ct", netip.MustParseAddr("127.0.80.98")},
	}
	for _, st := range steps {
		if st.down != "" {
			s.SetLinkMetrics(st.down, LinkMetrics{Status: StatusDown})
		}
		if got := askA(t, s, ldnsCNC, wideName); got != st.want {
			t.Errorf("after %q down: %v, want %v", st.down, got, st.want)
		}
	}
}

// Round robin and ratio spread answers in exact proportions, at both
// levels: between pools (pool-lb-mode) and between members.
func TestSpread(t *testing.T) {
	cases := []struct {
		name  string
		setup func(cfg *Config)
		n     int
		want  map[netip.Addr]int
	}{
		{"round-robin members", func(cfg *Config) {}, 12, map[netip.Addr]int{bjCNC: 3, bjCT: 3, gzCNC: 3, gzCT: 3}},
		{"ratio members", func(cfg *Config) {
			p := cfg.Pools["/Common/app_pool"]
			p.Mode = Ratio
			p.Members[0].Ratio, p.Members[1].Ratio, p.Members[2].Ratio, p.Members[3].Ratio = 3, 1, 2, 0
			// Ratio 0 means 1.
		}, 14, map[netip.Addr]int{bjCNC: 6, bjCT: 2, gzCNC: 4, gzCT: 2}},
		{"global-availability members", func(cfg *Config) {
			cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability
		}, 5, map[netip.Addr]int{bjCNC: 5}},
		{"ratio pools", func(cfg *Config) {
			cfg.Pools["/Common/bj"] = &Pool{Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_cnc"}}}
			cfg.Pools["/Common/gz"] = &Pool{Members: []PoolMember{{Server: "/Common/gz-ltm", VirtualServer: "vs_cnc"}}}
			w := cfg.WideIPs["/Common/www.example.com"]
			w.PoolLBMode = Ratio
			w.Pools = []WideIPPool{{Pool: "/Common/bj", Ratio: 1}, {Pool: "/Common/gz", Ratio: 3}}
		}, 8, map[netip.Addr]int{bjCNC: 2, gzCNC: 6}},
		{"round-robin pools", func(cfg *Config) {
			cfg.Pools["/Common/bj"] = &Pool{Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_ct"}}}
			cfg.Pools["/Common/gz"] = &Pool{Members: []PoolMember{{Server: "/Common/gz-ltm", VirtualServer: "vs_ct"}}}
			w := cfg.WideIPs["/Common/www.example.com"]
			w.Pools = []WideIPPool{{Pool: "/Common/bj"}, {Pool: "/Common/gz"}}
		}, 6, map[netip.Addr]int{bjCT: 3, gzCT: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			c.setup(cfg)
			s := newServer(t, cfg, Options{})
			got := count(t, s, ldnsCNC, c.n)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for a, n := range c.want {
				if got[a] != n {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

// Dynamic methods use the metrics fed to the server; without metrics
// they fall through to the alternate method.
func TestDynamicMethods(t *testing.T) {
	metrics := map[string]VSMetrics{
		"vs_cnc bj": {Connections: 50, Bps: 100, PacketRate: 10, Capacity: 2},
		"vs_ct bj":  {Connections: 10, Bps: 900, PacketRate: 40, Capacity: 5},
		"vs_cnc gz": {Connections: 30, Bps: 50, PacketRate: 5, Capacity: 1},
		"vs_ct gz":  {Connections: 40, Bps: 400, PacketRate: 20, Capacity: 3},
	}
	cases := []struct {
		mode    Mode
		metrics bool
		want    netip.Addr
		qos     *QoSWeights
	}{
		{LeastConnections, true, bjCT, nil},
		{KilobytesPerSecond, true, gzCNC, nil},
		{PacketRate, true, gzCNC, nil},
		{VirtualServerCapacity, true, bjCT, nil},
		{VirtualServerScore, false, gzCT, nil},
		{LeastConnections, false, bjCNC, nil}, // alternate global-availability
		{CompletionRate, true, bjCNC, nil},    // not measured: alternate
		// quality-of-service, BIG-IP's weights: packet rate 1 and
		// throughput 3 decide (no RTT or link measured): gz vs_cnc has
		// the lowest of both.
		{QualityOfService, true, gzCNC, nil},
		{QualityOfService, false, bjCNC, nil}, // nothing it weighs is known: alternate
		{QualityOfService, true, bjCT, &QoSWeights{VSCapacity: 10, Kbps: 1}},
		{QualityOfService, false, gzCT, &QoSWeights{VSScore: 1}},
	}
	for _, c := range cases {
		t.Run(string(c.mode), func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			// The LDNS's round trip stays unknown: the path methods
			// quality-of-service weighs would be measured as soon as a
			// probe came back, under load between two queries. A closed
			// port answers both probes (a reset, an ICMP port
			// unreachable); a socket that reads nothing answers neither,
			// and the probe waits past the test.
			silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ldnsCNC, 0)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { silent.Close() })
			cfg.Settings.ProbeProtocols = []string{"dns_dot"}
			cfg.Settings.ProbePort = uint16(silent.LocalAddr().(*net.UDPAddr).Port)
			cfg.Settings.ProbeTimeout = time.Hour
			p := cfg.Pools["/Common/app_pool"]
			p.Mode, p.Alternate, p.QoS = c.mode, GlobalAvailability, c.qos
			cfg.Servers["/Common/gz-ltm"].VirtualServers[1].Score = 90
			cfg.Servers["/Common/bj-ltm"].VirtualServers[1].Score = 10
			s := newServer(t, cfg, Options{})
			if c.metrics {
				for k, m := range metrics {
					f := strings.Fields(k)
					s.SetVirtualServerMetrics("/Common/"+f[1]+"-ltm", f[0], m)
				}
			}
			for i := 0; i < 3; i++ {
				if got := askA(t, s, ldnsCNC, wideName); got != c.want {
					t.Fatalf("query %d: %v, want %v", i, got, c.want)
				}
			}
			ps := s.Pools()[0]
			wantAlt := c.want == bjCNC
			if (ps.AltCount == 3) != wantAlt || (ps.Preferred == 3) == wantAlt {
				t.Errorf("preferred %d alternate %d", ps.Preferred, ps.AltCount)
			}
		})
	}
}

// Static persistence keeps one LDNS on one virtual server while it is
// up; only the LDNSes of a member that goes down move.
func TestStaticPersistence(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	cfg.Pools["/Common/app_pool"].Mode = StaticPersistence
	s := newServer(t, cfg, Options{})
	first := map[netip.Addr]netip.Addr{}
	spread := map[netip.Addr]bool{}
	for i := 1; i <= 40; i++ {
		src := netip.AddrFrom4([4]byte{127, 0, 87, byte(i)})
		a := askA(t, s, src, wideName)
		first[src] = a
		spread[a] = true
		for k := 0; k < 3; k++ {
			if b := askA(t, s, src, wideName); b != a {
				t.Fatalf("%v moved from %v to %v", src, a, b)
			}
		}
	}
	if len(spread) < 3 {
		t.Errorf("40 LDNSes landed on only %v", spread)
	}
	s.SetLinkMetrics("/Common/gz-cnc", LinkMetrics{Status: StatusDown})
	for src, a := range first {
		b := askA(t, s, src, wideName)
		if a != gzCNC && b != a {
			t.Errorf("%v moved from %v to %v though its member stayed up", src, a, b)
		}
		if b == gzCNC {
			t.Errorf("%v answered with a virtual server behind a down link", src)
		}
	}
}

// LDNS persistence: an LDNS keeps its answer for ttl-persistence, another
// LDNS gets the next one, the record goes when its member goes down or it
// expires, and it survives an Apply.
func TestLDNSPersistence(t *testing.T) {
	clk := newClock()
	cfg := testConfig(netip.AddrPort{})
	w := cfg.WideIPs["/Common/www.example.com"]
	w.Persistence, w.PersistTTL = true, 60*time.Second
	s := newServer(t, cfg, Options{Now: clk.Now})
	a := askA(t, s, ldnsCNC, wideName)
	for i := 0; i < 5; i++ {
		if b := askA(t, s, ldnsCNC, wideName); b != a {
			t.Fatalf("persisted LDNS moved from %v to %v", a, b)
		}
	}
	if b := askA(t, s, ldnsCT, wideName); b == a {
		t.Errorf("another LDNS got the same answer %v under round robin", b)
	}
	recs := s.PersistRecords()
	if len(recs) != 2 || recs[0].LDNS != netip.PrefixFrom(ldnsCNC, 32) || recs[0].Addr != a || recs[0].WideIP != "/Common/www.example.com" {
		t.Fatalf("records %+v", recs)
	}
	if st := s.WideIPs()[0]; st.Persisted != 5 {
		t.Errorf("persisted %d, want 5", st.Persisted)
	}
	// Kept across an Apply of the same objects.
	if err := s.Apply(testConfigPersist()); err != nil {
		t.Fatal(err)
	}
	if b := askA(t, s, ldnsCNC, wideName); b != a {
		t.Errorf("after Apply: %v, want %v", b, a)
	}
	// Refreshed on use: 50 s later and 50 s again it is still there.
	clk.Add(50 * time.Second)
	askA(t, s, ldnsCNC, wideName)
	clk.Add(50 * time.Second)
	if b := askA(t, s, ldnsCNC, wideName); b != a {
		t.Errorf("refreshed record lost: %v, want %v", b, a)
	}
	// Expired: the next answer comes from round robin again.
	clk.Add(61 * time.Second)
	if n := len(s.PersistRecords()); n != 0 {
		t.Errorf("%d records after expiry", n)
	}
	// Member down: the LDNS moves and stays on its new answer.
	b := askA(t, s, ldnsCNC, wideName)
	var link string
	for _, l := range []struct {
		a    netip.Addr
		link string
	}{{bjCNC, "/Common/bj-cnc"}, {bjCT, "/Common/bj-ct"}, {gzCNC, "/Common/gz-cnc"}, {gzCT, "/Common/gz-ct"}} {
		if l.a == b {
			link = l.link
		}
	}
	s.SetLinkMetrics(link, LinkMetrics{Status: StatusDown})
	c := askA(t, s, ldnsCNC, wideName)
	if c == b || !c.IsValid() {
		t.Fatalf("LDNS kept on %v behind a down link (got %v)", b, c)
	}
	s.SetLinkMetrics(link, LinkMetrics{Status: StatusUp})
	if d := askA(t, s, ldnsCNC, wideName); d != c {
		t.Errorf("moved back to %v, want to stay on %v", d, c)
	}
	if n := s.DeletePersistRecords("", netip.Addr{}); n != 2 {
		t.Errorf("deleted %d records, want 2", n)
	}
}

func testConfigPersist() *Config {
	cfg := testConfig(netip.AddrPort{})
	w := cfg.WideIPs["/Common/www.example.com"]
	w.Persistence, w.PersistTTL = true, 60*time.Second
	return cfg
}

// Topology: LDNSes of the cnc subnet get the cnc virtual servers, those
// of the ct subnet the ct ones; a longer LDNS match wins over a shorter
// one whatever its order; pool-lb-mode topology chooses between pools.
func TestTopology(t *testing.T) {
	pfx := netip.MustParsePrefix
	cfg := testConfig(netip.AddrPort{})
	cfg.Regions = map[string]*Region{
		"/Common/cnc_users": {Members: []Match{{Kind: MatchSubnet, Prefix: pfx("127.0.85.0/24")}}},
		"/Common/cnc_links": {Members: []Match{{Kind: MatchSubnet, Prefix: pfx("127.0.81.11/32")}, {Kind: MatchSubnet, Prefix: pfx("127.0.82.11/32")}}},
		"/Common/nested":    {Members: []Match{{Kind: MatchRegion, Name: "/Common/cnc_users"}}},
	}
	cfg.Topology = []TopologyRecord{
		{LDNS: Match{Kind: MatchRegion, Name: "/Common/nested"}, Server: Match{Kind: MatchRegion, Name: "/Common/cnc_links"}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.86.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.0.81.12/32")}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.86.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.0.82.12/32")}, Score: 100},
		// A single LDNS of the cnc subnet is sent to Guangzhou only,
		// though this record comes last in order.
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.85.2/32")}, Server: Match{Kind: MatchDatacenter, Name: "/Common/dc-gz"}, Score: 200, Order: 9},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.85.2/32")}, Server: Match{Not: true, Kind: MatchDatacenter, Name: "/Common/dc-gz"}, Score: 1, Order: 10},
	}
	cfg.Pools["/Common/app_pool"].Mode = Topology
	listen := freeAddr(t, "127.0.80.11")
	cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen, Protocol: "udp"}}
	newServer(t, cfg, Options{})
	cases := []struct {
		ldns netip.Addr
		want []netip.Addr
	}{
		{ldnsCNC, []netip.Addr{bjCNC, gzCNC}},
		{ldnsCT, []netip.Addr{bjCT, gzCT}},
		{ldnsCNC2, []netip.Addr{gzCNC, gzCT}},
		{netip.MustParseAddr("127.0.87.1"), []netip.Addr{bjCNC, bjCT, gzCNC, gzCT}}, // no record: all score 0
	}
	for _, c := range cases {
		got := map[netip.Addr]int{}
		for i := 0; i < 2*len(c.want); i++ {
			m := queryNet(t, c.ldns, listen, "udp", wideName, dns.TypeA)
			got[gslbtest.Addrs(m)[0]]++
		}
		if len(got) != len(c.want) {
			t.Errorf("LDNS %v: %v, want %v in turn", c.ldns, got, c.want)
			continue
		}
		for _, a := range c.want {
			if got[a] != 2 {
				t.Errorf("LDNS %v: %v, want %v in turn", c.ldns, got, c.want)
			}
		}
	}

	// Deny zero scores: an LDNS no record matches gets nothing from
	// topology and the alternate (global-availability) answers.
	cfg2 := testConfig(netip.AddrPort{})
	cfg2.Regions, cfg2.Topology = cfg.Regions, cfg.Topology
	cfg2.Settings.TopologyDenyZeroScores = true
	p := cfg2.Pools["/Common/app_pool"]
	p.Mode, p.Alternate = Topology, GlobalAvailability
	s2 := newServer(t, cfg2, Options{})
	if got := askA(t, s2, netip.MustParseAddr("127.0.87.1"), wideName); got != bjCNC {
		t.Errorf("unmatched LDNS with zero scores denied: %v, want the alternate's %v", got, bjCNC)
	}
	if got := askA(t, s2, ldnsCT, wideName); got != bjCT && got != gzCT {
		t.Errorf("ct LDNS: %v", got)
	}

	// Pool-level topology.
	cfg3 := testConfig(netip.AddrPort{})
	cfg3.Pools["/Common/cnc"] = &Pool{Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_cnc"}, {Server: "/Common/gz-ltm", VirtualServer: "vs_cnc"}}, Mode: GlobalAvailability}
	cfg3.Pools["/Common/ct"] = &Pool{Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_ct"}, {Server: "/Common/gz-ltm", VirtualServer: "vs_ct"}}, Mode: GlobalAvailability}
	w := cfg3.WideIPs["/Common/www.example.com"]
	w.PoolLBMode = Topology
	w.Pools = []WideIPPool{{Pool: "/Common/cnc"}, {Pool: "/Common/ct"}}
	cfg3.Topology = []TopologyRecord{
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.85.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/cnc"}, Score: 10},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.86.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/ct"}, Score: 10},
	}
	s3 := newServer(t, cfg3, Options{})
	for i := 0; i < 3; i++ {
		if got := askA(t, s3, ldnsCNC, wideName); got != bjCNC {
			t.Errorf("cnc LDNS: %v", got)
		}
		if got := askA(t, s3, ldnsCT, wideName); got != bjCT {
			t.Errorf("ct LDNS: %v", got)
		}
	}
}

// Seed 001's RTT procedure: an unknown LDNS gets an answer at once (from
// the alternate method) while every link probes it from its own source
// address; the results fill the RTT table, and from then on the LDNS gets
// the virtual server on the lowest-RTT path, and the next best when that
// path's link goes down.
func TestRoundTripTime(t *testing.T) {
	ldns, err := gslbtest.NewLDNS(ldnsCNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ldns.Close()
	a := netip.MustParseAddr
	ldns.SetDelay(a("127.0.81.1"), 150*time.Millisecond) // bj-cnc
	ldns.SetDelay(a("127.0.81.2"), 60*time.Millisecond)  // bj-ct
	ldns.SetDelay(a("127.0.82.1"), 0)                    // gz-cnc: the fastest path
	ldns.SetDelay(a("127.0.82.2"), 250*time.Millisecond) // gz-ct

	listen := freeAddr(t, "127.0.80.12")
	cfg := testConfig(listen)
	cfg.Settings.ProbePort = ldns.Port()
	cfg.Settings.ProbeProtocols = []string{"dns_dot"}
	cfg.Settings.LDNSPrefix4 = 32
	p := cfg.Pools["/Common/app_pool"]
	p.Mode, p.Alternate = LowestRoundTripTime, RoundRobin
	s := newServer(t, cfg, Options{})

	m, err := ldns.Query(listen, wideName, dns.TypeA)
	if err != nil {
		t.Fatal(err)
	}
	if len(gslbtest.Addrs(m)) != 1 {
		t.Fatalf("unknown LDNS got no answer: %v", m)
	}
	if st := s.Pools()[0]; st.AltCount != 1 {
		t.Errorf("first answer: alternate %d, want 1", st.AltCount)
	}
	var rec LDNSRecord
	waitFor(t, "the probes of every link", func() bool {
		for _, r := range s.LDNSRecords() {
			if r.Addr == ldnsCNC && !r.Probing && len(r.Paths) == 4 {
				rec = r
				return true
			}
		}
		return false
	})
	for _, p := range rec.Paths {
		if p.Error != "" || p.Kind != "link" || p.Probe != "dns_dot" {
			t.Errorf("path %+v", p)
		}
	}
	for _, src := range []string{"127.0.81.1", "127.0.81.2", "127.0.82.1", "127.0.82.2"} {
		if n := ldns.Probes(a(src)); n != 1 {
			t.Errorf("%d probes from %s, want 1", n, src)
		}
	}
	for i := 0; i < 4; i++ {
		m, err := ldns.Query(listen, wideName, dns.TypeA)
		if err != nil {
			t.Fatal(err)
		}
		if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != gzCNC {
			t.Fatalf("known LDNS: %v, want the lowest-RTT %v (table %+v)", got, gzCNC, rec.Paths)
		}
	}
	s.SetLinkMetrics("/Common/gz-cnc", LinkMetrics{Status: StatusDown})
	if got := askA(t, s, ldnsCNC, wideName); got != bjCT {
		t.Errorf("gz-cnc down: %v, want the next best %v", got, bjCT)
	}
	if n := ldns.Probes(a("127.0.82.1")); n != 1 {
		t.Errorf("a known LDNS was probed again (%d)", n)
	}
	// A datacenter's prober is used when links have none.
	cfg2 := testConfig(netip.AddrPort{})
	for _, l := range cfg2.Links {
		l.Prober = netip.Addr{}
	}
	if err := s.Apply(cfg2); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range s.Datacenters() {
		kinds = append(kinds, d.Name+"="+d.Prober)
	}
	if strings.Join(kinds, " ") != "/Common/dc-bj=127.0.81.1 /Common/dc-gz=127.0.82.1" {
		t.Errorf("datacenter probers %v", kinds)
	}
}

// The probe protocols on their own: dns_dot times the LDNS's reply, tcp a
// handshake (a reset counts), and a path whose source cannot be bound or
// whose LDNS does not answer reports an error.
func TestMeasure(t *testing.T) {
	ldns, err := gslbtest.NewLDNS(netip.MustParseAddr("127.0.85.9"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ldns.Close()
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.85.10:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silentPort := uint16(silent.LocalAddr().(*net.UDPAddr).Port)
	src := netip.MustParseAddr("127.0.81.9")
	ctx := t.Context()
	cases := []struct {
		name   string
		src    netip.Addr
		dst    netip.Addr
		port   uint16
		protos []string
		proto  string // "" means an error
	}{
		{"dns_dot", src, ldns.Addr(), ldns.Port(), []string{"dns_dot"}, "dns_dot"},
		{"tcp", src, ldns.Addr(), ldns.Port(), []string{"tcp"}, "tcp"},
		{"tcp reset", src, netip.MustParseAddr("127.0.85.11"), 9, []string{"tcp"}, "tcp"},
		{"dns_dot silent, then tcp reset", src, netip.MustParseAddr("127.0.85.10"), silentPort, []string{"dns_dot", "tcp"}, "tcp"},
		{"unbindable source", netip.MustParseAddr("192.0.2.1"), ldns.Addr(), ldns.Port(), []string{"dns_dot", "tcp"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, proto, err := measure(ctx, c.src, c.dst, c.port, 300*time.Millisecond, c.protos)
			if proto != c.proto || (err == nil) != (c.proto != "") {
				t.Errorf("proto %q err %v, want %q", proto, err, c.proto)
			}
		})
	}
}

// The static zone is served like a plain authoritative server.
func TestStaticZone(t *testing.T) {
	listen := freeAddr(t, "127.0.80.13")
	newServer(t, testConfig(listen), Options{})
	cases := []struct {
		name   string
		qtype  uint16
		rcode  int
		aa     bool
		answer []string // record types in the answer
		ns     []string
		extra  []string
	}{
		{"example.com.", dns.TypeSOA, dns.RcodeSuccess, true, []string{"SOA"}, nil, nil},
		{"example.com.", dns.TypeNS, dns.RcodeSuccess, true, []string{"NS", "NS"}, nil, []string{"A", "A"}},
		{"example.com.", dns.TypeMX, dns.RcodeSuccess, true, []string{"MX"}, nil, []string{"A"}},
		{"static.example.com.", dns.TypeA, dns.RcodeSuccess, true, []string{"A"}, nil, nil},
		{"STATIC.example.com.", dns.TypeA, dns.RcodeSuccess, true, []string{"A"}, nil, nil},
		{"alias.example.com.", dns.TypeA, dns.RcodeSuccess, true, []string{"CNAME", "A"}, nil, nil},
		{"static.example.com.", dns.TypeAAAA, dns.RcodeSuccess, true, nil, []string{"SOA"}, nil},
		{"er.name.example.com.", dns.TypeA, dns.RcodeSuccess, true, nil, []string{"SOA"}, nil}, // empty non-terminal
		{"nothing.example.com.", dns.TypeA, dns.RcodeNameError, true, nil, []string{"SOA"}, nil},
		{"host.sub.example.com.", dns.TypeA, dns.RcodeSuccess, false, nil, []string{"NS"}, []string{"A"}},
		{"www.example.org.", dns.TypeA, dns.RcodeRefused, false, nil, nil, nil},
		{wideName, dns.TypeAAAA, dns.RcodeSuccess, true, nil, []string{"SOA"}, nil},
		{wideName, dns.TypeMX, dns.RcodeSuccess, true, nil, []string{"SOA"}, nil},
	}
	types := func(rrs []dns.RR) []string {
		var out []string
		for _, rr := range rrs {
			if rr.Header().Rrtype != dns.TypeOPT {
				out = append(out, dns.TypeToString[rr.Header().Rrtype])
			}
		}
		return out
	}
	for _, c := range cases {
		for _, network := range []string{"udp", "tcp"} {
			m := queryNet(t, ldnsCNC, listen, network, c.name, c.qtype)
			desc := network + " " + c.name + " " + dns.TypeToString[c.qtype]
			if m.Rcode != c.rcode || m.Authoritative != c.aa {
				t.Errorf("%s: rcode %s aa %v", desc, dns.RcodeToString[m.Rcode], m.Authoritative)
			}
			if g := strings.Join(types(m.Answer), " "); g != strings.Join(c.answer, " ") {
				t.Errorf("%s: answer %q, want %q", desc, g, strings.Join(c.answer, " "))
			}
			if g := strings.Join(types(m.Ns), " "); g != strings.Join(c.ns, " ") {
				t.Errorf("%s: authority %q, want %q", desc, g, strings.Join(c.ns, " "))
			}
			if g := strings.Join(types(m.Extra), " "); g != strings.Join(c.extra, " ") {
				t.Errorf("%s: additional %q, want %q", desc, g, strings.Join(c.extra, " "))
			}
		}
	}
	m := queryNet(t, ldnsCNC, listen, "udp", "nothing.example.com.", dns.TypeA)
	if soa := m.Ns[0]; soa.Header().Ttl != 60 {
		t.Errorf("negative TTL %d, want the SOA minimum 60", soa.Header().Ttl)
	}
}

// Apply is hitless: a listener that stays is not rebound, and one
// that changes is; the RTT table and counters stay; bad configurations
// are refused whole.
func TestApply(t *testing.T) {
	listen := freeAddr(t, "127.0.80.14")
	cfg := testConfig(listen)
	s := newServer(t, cfg, Options{})
	before := s.ListenerAddrs()
	if len(before) != 2 {
		t.Fatalf("listeners %v", before)
	}
	queryNet(t, ldnsCNC, listen, "udp", wideName, dns.TypeA)
	sock := s.listeners[listenerKey{listen, "udp"}]
	cfg2 := testConfig(listen)
	cfg2.Pools["/Common/app_pool"].Mode = GlobalAvailability
	if err := s.Apply(cfg2); err != nil {
		t.Fatal(err)
	}
	if s.listeners[listenerKey{listen, "udp"}] != sock {
		t.Error("unchanged listener was rebound")
	}
	if got := gslbtest.Addrs(queryNet(t, ldnsCNC, listen, "udp", wideName, dns.TypeA)); got[0] != bjCNC {
		t.Errorf("new mode not in service: %v", got)
	}
	if st := s.WideIPs()[0]; st.Requests != 2 {
		t.Errorf("counters not kept: %d requests", st.Requests)
	}
	bad := []struct {
		name string
		edit func(*Config)
		msg  string
	}{
		{"unknown pool", func(c *Config) { c.WideIPs["/Common/www.example.com"].Pools[0].Pool = "/Common/nope" }, `pool "/Common/nope" does not exist`},
		{"unknown member", func(c *Config) { c.Pools["/Common/app_pool"].Members[0].VirtualServer = "nope" }, "no such virtual server"},
		{"unknown link", func(c *Config) { c.Servers["/Common/bj-ltm"].VirtualServers[0].Link = "/Common/nope" }, `link "/Common/nope"`},
		{"bad pool-lb-mode", func(c *Config) { c.WideIPs["/Common/www.example.com"].PoolLBMode = LeastConnections }, "pool-lb-mode"},
		{"bad zone", func(c *Config) { c.Zones[0].Data += "bad IN A not-an-address\n" }, "zone example.com."},
		{"zone without SOA", func(c *Config) { c.Zones = []Zone{{Origin: "x.test", Data: "x.test. IN A 127.0.0.1\n"}} }, "no SOA"},
		{"unknown region", func(c *Config) {
			c.Topology = []TopologyRecord{{LDNS: Match{Kind: MatchRegion, Name: "/Common/r"}, Server: Match{Kind: MatchDatacenter, Name: "/Common/dc-bj"}}}
		}, `region "/Common/r"`},
		{"duplicate alias", func(c *Config) {
			c.WideIPs["/Common/other.example.com"] = &WideIP{Aliases: []string{"www.example.com"}}
		}, "already"},
		{"listener twice", func(c *Config) {
			c.Listeners = append(c.Listeners, Listener{Name: "/Common/l2", Addr: listen, Protocol: "tcp"})
		}, "tcp " + listen.String() + " is already a listener"},
		{"bad ip-protocol", func(c *Config) {
			c.Listeners = append(c.Listeners, Listener{Name: "/Common/l2", Addr: listen, Protocol: "sctp"})
		}, `ip-protocol "sctp"`},
		// Only binding tells: Check passes it.
		{"listener in use", func(c *Config) {
			c.Listeners = append(c.Listeners, Listener{Name: "/Common/l2", Addr: netip.AddrPortFrom(ldnsCNC, 1), Protocol: "udp"},
				Listener{Name: "/Common/l3", Addr: netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), 53), Protocol: "udp"})
		}, "192.0.2.1"},
	}
	for _, b := range bad {
		c := testConfig(listen)
		b.edit(c)
		err := s.Apply(c)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: error %v, want one saying %q", b.name, err, b.msg)
		}
		cerr := Check(c)
		if b.name == "listener in use" {
			if cerr != nil {
				t.Errorf("%s: Check says %v; only binding can tell", b.name, cerr)
			}
			continue
		}
		if cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("%s: Check says %v, Apply %v", b.name, cerr, err)
		}
	}
	if got := s.ListenerAddrs(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("refused Apply changed listeners: %v", got)
	}
	// Moving the listener rebinds it; the old address stops answering.
	listen2 := freeAddr(t, "127.0.80.15")
	if err := s.Apply(testConfig(listen2)); err != nil {
		t.Fatal(err)
	}
	queryNet(t, ldnsCNC, listen2, "tcp", wideName, dns.TypeA)
	if _, err := gslbtest.Query(ldnsCNC, listen, "tcp", wideName, dns.TypeA, time.Second); err == nil {
		t.Error("old listener still answers")
	}
}

// A compiled plan goes in service once, with the runtime state of the
// objects it keeps; compiling touches no server.
func TestApplyPlan(t *testing.T) {
	listen := freeAddr(t, "127.0.80.16")
	s := newServer(t, testConfig(listen), Options{})
	queryNet(t, ldnsCNC, listen, "udp", wideName, dns.TypeA)
	cfg := testConfig(listen)
	cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability
	pl, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Still round robin: compiling changed nothing in service.
	seen := map[netip.Addr]bool{}
	for i := 0; i < 4; i++ {
		for _, a := range gslbtest.Addrs(ask(t, s, ldnsCNC, wideName, dns.TypeA)) {
			seen[a] = true
		}
	}
	if len(seen) != 4 {
		t.Fatalf("answers %v before the plan is applied, want the four in turn", seen)
	}
	before := s.WideIPs()[0].Requests
	if err := s.ApplyPlan(pl); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if got := gslbtest.Addrs(ask(t, s, ldnsCNC, wideName, dns.TypeA)); len(got) != 1 || got[0] != bjCNC {
			t.Fatalf("global-availability answer %v, want %v", got, bjCNC)
		}
	}
	if got := s.WideIPs()[0].Requests; got != before+3 {
		t.Errorf("requests %d, want the kept count %d plus 3", got, before)
	}
	if err := s.ApplyPlan(pl); err == nil || !strings.Contains(err.Error(), "compile the configuration again") {
		t.Errorf("a plan applied twice: %v", err)
	}
}

// A TCP monitor marks a virtual server with nothing listening down, and
// one with a listener up.
func TestMonitor(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.81.11:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cfg := testConfig(netip.AddrPort{})
	mon := Monitor{Type: MonitorTCP, Interval: 20 * time.Millisecond, Timeout: 60 * time.Millisecond}
	bj := cfg.Servers["/Common/bj-ltm"].VirtualServers
	bj[0].Destination = up.Addr().(*net.TCPAddr).AddrPort()
	bj[0].Monitor = mon
	bj[1].Destination = netip.MustParseAddrPort("127.0.81.12:9") // nothing listens
	bj[1].Monitor = mon
	s := newServer(t, cfg, Options{})
	status := func(name string) Status {
		for _, sv := range s.Servers() {
			for _, v := range sv.VirtualServers {
				if v.Name == name {
					return v.Monitor
				}
			}
		}
		return StatusUnknown
	}
	waitFor(t, "monitor verdicts", func() bool {
		return status("/Common/bj-ltm:vs_cnc") == StatusUp && status("/Common/bj-ltm:vs_ct") == StatusDown
	})
	got := count(t, s, ldnsCNC, 9)
	if got[bjCT] != 0 || got[bjCNC] != 3 {
		t.Errorf("answers %v: the down virtual server must get none", got)
	}
	// A reported up status overrides the probe.
	s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_ct", VSMetrics{Status: StatusUp})
	if got := count(t, s, ldnsCNC, 4); got[bjCT] != 1 {
		t.Errorf("reported up: %v", got)
	}
	// Dropping the monitor forgets its verdict.
	if err := s.Apply(testConfig(netip.AddrPort{})); err != nil {
		t.Fatal(err)
	}
	if st := status("/Common/bj-ltm:vs_ct"); st != StatusUnknown {
		t.Errorf("status %v after the monitor went", st)
	}
}

// dig, the tool the field uses, gets the wide IP and the static names.
func TestDig(t *testing.T) {
	dig, err := exec.LookPath("dig")
	if err != nil {
		t.Skip("dig not found (Debian package bind9-dnsutils)")
	}
	listen := freeAddr(t, "127.0.80.16")
	newServer(t, testConfig(listen), Options{})
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{wideName, "A"}, []string{"status: NOERROR", "flags: qr aa", "30\tIN\tA\t127.0.8"}},
		{[]string{"+tcp", "app.example.com", "A"}, []string{"status: NOERROR", "IN\tA\t127.0.8"}},
		{[]string{"example.com", "MX"}, []string{"10 mail.example.com.", "mail.example.com.\t300\tIN\tA\t127.0.80.25"}},
		{[]string{"example.com", "SOA"}, []string{"ns1.example.com. hostmaster.example.com. 2024010101"}},
		{[]string{"nothing.example.com", "A"}, []string{"status: NXDOMAIN"}},
		{[]string{"www.example.org", "A"}, []string{"status: REFUSED"}},
	}
	for _, c := range cases {
		args := append([]string{"-b", ldnsCNC.String(), "@" + listen.Addr().String(), "-p", strconv.Itoa(int(listen.Port())), "+norecurse", "+time=2", "+tries=1"}, c.args...)
		out, err := exec.Command(dig, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dig %v: %v\n%s", c.args, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("dig %v: no %q in\n%s", c.args, w, out)
			}
		}
	}
}

// LDNS persistence through a UDP reader, which keeps the record it used
// last (persistMemo): the story of TestLDNSPersistence, plus what must
// make the reader look in the table again: a record deleted, replaced
// after its member went down, or expired, and a new plan.
func TestLDNSPersistenceReaderMemo(t *testing.T) {
	clk := newClock()
	s := newServer(t, testConfigPersist(), Options{Now: clk.Now})
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	in, _ := q.Pack()
	var bc batchCtx // one reader's, kept from query to query
	ask := func(ldns netip.Addr) netip.Addr {
		t.Helper()
		bc.now = clk.Now()
		resp, send := s.answerUDP(in, ldns, nil, listenerKey{}, &bc)
		s.flushSeen(&bc)
		m := new(dns.Msg)
		if !send || m.Unpack(resp) != nil || len(m.Answer) != 1 {
			t.Fatalf("answer %v %v", send, m)
		}
		a, _ := netip.AddrFromSlice(m.Answer[0].(*dns.A).A.To4())
		return a
	}
	record := func() PersistRecord {
		t.Helper()
		recs := s.PersistRecords()
		if len(recs) != 1 {
			t.Fatalf("records %+v, want one", recs)
		}
		return recs[0]
	}
	a := ask(ldnsCNC)
	for range 5 {
		if b := ask(ldnsCNC); b != a {
			t.Fatalf("persisted LDNS moved from %v to %v", a, b)
		}
	}
	if bc.persist.rec == nil {
		t.Fatal("the reader keeps no record")
	}
	if st := s.WideIPs()[0]; st.Persisted != 5 {
		t.Errorf("persisted %d, want 5", st.Persisted)
	}
	// Refreshed by the reader's hits: 50 s later and 50 s again it is
	// still there, and the table shows the pushed expiry.
	clk.Add(50 * time.Second)
	ask(ldnsCNC)
	if left := record().Expires.Sub(clk.Now()); left < 59*time.Second {
		t.Errorf("expiry %v ahead after a hit, want 60 s", left)
	}
	clk.Add(50 * time.Second)
	if b := ask(ldnsCNC); b != a {
		t.Errorf("refreshed record lost: %v, want %v", b, a)
	}
	// Deleted: the next query balances again and makes a new record,
	// which the reader then uses.
	if n := s.DeletePersistRecords("", netip.Addr{}); n != 1 {
		t.Fatalf("deleted %d", n)
	}
	clk.Add(time.Second)
	b := ask(ldnsCNC)
	if r := record(); r.Addr != b || !r.Created.Equal(clk.Now()) {
		t.Errorf("after delete: record %+v, want a new one for %v made now", r, b)
	}
	if c := ask(ldnsCNC); c != b {
		t.Errorf("after delete and a new record: %v, want %v", c, b)
	}
	// The member down: the record is replaced, the reader follows it.
	link := map[netip.Addr]string{bjCNC: "/Common/bj-cnc", bjCT: "/Common/bj-ct", gzCNC: "/Common/gz-cnc", gzCT: "/Common/gz-ct"}[b]
	s.SetLinkMetrics(link, LinkMetrics{Status: StatusDown})
	c := ask(ldnsCNC)
	if c == b {
		t.Fatalf("LDNS kept on %v behind a down link", b)
	}
	s.SetLinkMetrics(link, LinkMetrics{Status: StatusUp})
	if d := ask(ldnsCNC); d != c {
		t.Errorf("moved back to %v, want to stay on %v", d, c)
	}
	if r := record(); r.Addr != c {
		t.Errorf("record %+v, want %v", r, c)
	}
	// A new plan: the record stays and the reader finds it again.
	if err := s.Apply(testConfigPersist()); err != nil {
		t.Fatal(err)
	}
	if d := ask(ldnsCNC); d != c {
		t.Errorf("after Apply: %v, want %v", d, c)
	}
	if bc.persist.plan != s.plan.Load() {
		t.Error("the reader's record is of the old plan")
	}
	// Expired: gone from the table, and the reader does not answer from it.
	clk.Add(61 * time.Second)
	if n := len(s.PersistRecords()); n != 0 {
		t.Errorf("%d records after expiry", n)
	}
	d := ask(ldnsCNC)
	if r := record(); r.Addr != d || !r.Created.Equal(clk.Now()) {
		t.Errorf("after expiry: record %+v, want a new one for %v made now", r, d)
	}
}
