package gslb

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// ecsConfig is two sites, east 127.54.11.10 and west 127.54.12.10, in one
// pool (west first in member-order) and each in a pool of its own; the
// topology records send 127.54.1.0/24 east and 127.54.2.0/24 west. Zero
// scores are denied, so an address no record matches gets the alternate
// method's first member (west), not a turn.
func ecsConfig() *Config {
	a, pfx := netip.MustParseAddr, netip.MustParsePrefix
	host := func(name, dc, addr string) *Host {
		return &Host{Name: name, Datacenter: dc, VirtualServers: []*VirtualServer{{Name: "vs", Destination: netip.AddrPortFrom(a(addr), 80)}}}
	}
	return &Config{
		Settings:    Settings{TopologyDenyZeroScores: true},
		Datacenters: map[string]*Datacenter{"/Common/dc_east": {Name: "/Common/dc_east"}, "/Common/dc_west": {Name: "/Common/dc_west"}},
		Servers: map[string]*Host{
			"/Common/east": host("/Common/east", "/Common/dc_east", "127.54.11.10"),
			"/Common/west": host("/Common/west", "/Common/dc_west", "127.54.12.10"),
		},
		Pools: map[string]*Pool{
			"/Common/web": {Name: "/Common/web", Mode: Topology, Alternate: GlobalAvailability, Members: []PoolMember{
				{Server: "/Common/west", VirtualServer: "vs", Order: 0}, {Server: "/Common/east", VirtualServer: "vs", Order: 1}}},
			"/Common/p_east": {Name: "/Common/p_east", Members: []PoolMember{{Server: "/Common/east", VirtualServer: "vs"}}},
			"/Common/p_west": {Name: "/Common/p_west", Members: []PoolMember{{Server: "/Common/west", VirtualServer: "vs"}}},
		},
		WideIPs: map[string]*WideIP{
			"/Common/www.ecs.test":   {Name: "/Common/www.ecs.test", Pools: []WideIPPool{{Pool: "/Common/web"}}},
			"/Common/pools.ecs.test": {Name: "/Common/pools.ecs.test", PoolLBMode: Topology, Pools: []WideIPPool{{Pool: "/Common/p_west"}, {Pool: "/Common/p_east"}}},
		},
		Topology: []TopologyRecord{
			{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.54.1.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.54.11.0/24")}, Score: 100},
			{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.54.2.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.54.12.0/24")}, Score: 100},
			{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.54.1.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/p_east"}, Score: 100},
			{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.54.2.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/p_west"}, Score: 100},
		},
	}
}

var (
	ecsEast     = netip.MustParseAddr("127.54.11.10")
	ecsWest     = netip.MustParseAddr("127.54.12.10")
	ecsResolver = netip.MustParseAddr("127.54.9.5") // in neither subnet
)

// ecsQuery is an A query with an EDNS0 client subnet option (none when
// subnet is "").
func ecsQuery(name, subnet string) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	if subnet == "" {
		return q
	}
	q.SetEdns0(1232, false)
	ip, n, _ := net.ParseCIDR(subnet)
	ones, _ := n.Mask.Size()
	e := &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(ones), Address: ip.To4()}
	if ip.To4() == nil {
		e.Family, e.Address = 2, ip
	}
	q.IsEdns0().Option = append(q.IsEdns0().Option, e)
	return q
}

// topology-prefer-edns0-client-subnet: topology scores the client
// subnet's address (member and pool level) and the answer's scope tells
// the resolver the answer holds for that subnet; otherwise the resolver's
// address decides and the scope is 0.
func TestTopologyPreferECS(t *testing.T) {
	cases := []struct {
		name      string
		prefer    bool
		wide      string
		edit      func(*Config)
		ldns      netip.Addr
		subnet    string
		want      netip.Addr
		wantScope int // -1: no option in the answer
	}{
		{"off: the resolver decides", false, "www", nil, ecsResolver, "127.54.1.0/24", ecsWest, 0},
		{"off: resolver in east", false, "www", nil, netip.MustParseAddr("127.54.1.5"), "127.54.2.0/24", ecsEast, 0},
		{"on: east subnet", true, "www", nil, ecsResolver, "127.54.1.0/24", ecsEast, 24},
		{"on: host bits past the prefix", true, "www", nil, ecsResolver, "127.54.1.77/24", ecsEast, 24},
		{"on: west subnet /25", true, "www", nil, ecsResolver, "127.54.2.0/25", ecsWest, 25},
		{"on: source prefix 0 keeps the resolver", true, "www", nil, netip.MustParseAddr("127.54.1.5"), "0.0.0.0/0", ecsEast, 0},
		{"on: no option", true, "www", nil, netip.MustParseAddr("127.54.2.5"), "", ecsWest, -1},
		{"on: IPv6 subnet matching nothing", true, "www", nil, netip.MustParseAddr("127.54.1.5"), "2001:db8:1::/56", ecsWest, 56},
		{"on: pool level", true, "pools", nil, ecsResolver, "127.54.1.0/24", ecsEast, 24},
		{"on: pool level, west", true, "pools", nil, netip.MustParseAddr("127.54.1.5"), "127.54.2.0/24", ecsWest, 24},
		{"on: no topology, scope 0", true, "www", func(c *Config) { c.Pools["/Common/web"].Mode = GlobalAvailability }, ecsResolver, "127.54.1.0/24", ecsWest, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ecsConfig()
			for _, w := range cfg.WideIPs {
				w.TopologyPreferECS = c.prefer
			}
			if c.edit != nil {
				c.edit(cfg)
			}
			s := newServer(t, cfg, Options{})
			for i := 0; i < 3; i++ { // the same every time, not a turn
				m, send := s.Answer(ecsQuery(c.wide+".ecs.test.", c.subnet), c.ldns, true)
				if !send {
					t.Fatal("no answer")
				}
				if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != c.want {
					t.Fatalf("answer %v, want %v", got, c.want)
				}
				scope := -1
				if opt := m.IsEdns0(); opt != nil {
					for _, o := range opt.Option {
						if e, ok := o.(*dns.EDNS0_SUBNET); ok {
							scope = int(e.SourceScope)
						}
					}
				}
				if scope != c.wantScope {
					t.Fatalf("scope %d, want %d", scope, c.wantScope)
				}
			}
		})
	}
}

// syncBuf is a log sink the test reads while the server writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuf) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.b.String()
	w.b.Reset()
	return s
}

// load-balancing-decision-log-verbosity: each decision is one log line
// with the steps asked for, and nothing is logged without it.
func TestDecisionLog(t *testing.T) {
	const (
		poolOK     = "[pool (/Common/web) check succeeded - pool state is available]"
		poolSel    = "[round-robin selected pool (/Common/web)]"
		eastOK     = "[pool member check succeeded (/Common/east:vs 127.54.11.10:80) - pool member state is available]"
		westOff    = "[pool member check failed (/Common/west:vs 127.54.12.10:80) - The virtual server is disabled]"
		topoEast   = "[topology selected pool member (/Common/east:vs 127.54.11.10:80) - preferred method]"
		gaEast     = "[global-availability selected pool member (/Common/east:vs 127.54.11.10:80) - alternate method]"
		topoNone   = "[topology (preferred method) gave no answer - no metric or score decided]"
		subnet     = "[client subnet 127.54.2.0/24]"
		head       = "gslb: lb decision: from 127.54.9.5 [www.ecs.test A]"
		returned   = "[no pool answered - returned to DNS]"
		fallbackIP = "[fallback-ip selected (127.54.99.1) - fallback method]"
	)
	westDown := func(c *Config) { c.Servers["/Common/west"].VirtualServers[0].Disabled = true }
	cases := []struct {
		name   string
		words  []string
		edit   func(*Config)
		subnet string
		want   []string
		not    []string
	}{
		{"none", nil, nil, "", nil, []string{"lb decision"}},
		{"pool selection", []string{"pool-selection"}, nil, "", []string{head, poolSel}, []string{poolOK, eastOK, "selected pool member"}},
		{"pool traversal", []string{"pool-traversal"}, nil, "", []string{head, poolOK}, []string{poolSel, eastOK}},
		{"member selection, alternate", []string{"pool-member-selection"}, westDown, "", []string{gaEast}, []string{poolSel, topoNone}},
		{"member traversal", []string{"pool-member-traversal"}, westDown, "", []string{eastOK, westOff, topoNone}, []string{gaEast}},
		{"all, with the client subnet", []string{"pool-selection", "pool-traversal", "pool-member-selection", "pool-member-traversal"}, func(c *Config) {
			westDown(c)
			c.WideIPs["/Common/www.ecs.test"].TopologyPreferECS = true
		}, "127.54.2.0/24", []string{head + " " + subnet + " " + poolOK + " " + westOff + " " + eastOK + " " + topoNone + " " + gaEast + " " + poolSel}, nil},
		{"return to DNS", []string{"pool-selection", "pool-traversal"}, func(c *Config) {
			westDown(c)
			c.Servers["/Common/east"].Disabled = true
		}, "", []string{"[pool (/Common/web) check failed - No enabled pool members available]", "[pool (/Common/web) skipped - no load balancing method gave an answer]", returned}, []string{poolSel}},
		{"fallback-ip", []string{"pool-member-selection"}, func(c *Config) {
			westDown(c)
			c.Servers["/Common/east"].Disabled = true
			c.Pools["/Common/web"].Fallback = FallbackIP
			c.Pools["/Common/web"].FallbackIP = netip.MustParseAddr("127.54.99.1")
		}, "", []string{fallbackIP}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ecsConfig()
			dl, err := ParseDecisionLog(c.words)
			if err != nil {
				t.Fatal(err)
			}
			cfg.WideIPs["/Common/www.ecs.test"].DecisionLog = dl
			if c.edit != nil {
				c.edit(cfg)
			}
			var sink syncBuf
			s := newServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&sink, nil))})
			sink.take()
			if _, send := s.Answer(ecsQuery("www.ecs.test.", c.subnet), ecsResolver, true); !send {
				t.Fatal("no answer")
			}
			got := sink.take()
			if n := strings.Count(got, "lb decision"); len(c.want) > 0 && n != 1 {
				t.Fatalf("%d decision lines, want 1:\n%s", n, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %q:\n%s", w, got)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got, w) {
					t.Errorf("log has %q:\n%s", w, got)
				}
			}
		})
	}
}

// A name pool's decision is logged with its target.
func TestDecisionLogNamePool(t *testing.T) {
	cfg := ecsConfig()
	cfg.Pools["mx /Common/m"] = &Pool{Name: "/Common/m", Type: TypeMX, Mode: GlobalAvailability,
		Members: []PoolMember{{Target: "mx1.ecs.test", Priority: 10}, {Target: "mx2.ecs.test", Priority: 20, Order: 1, Disabled: true}}}
	cfg.WideIPs["mx /Common/ecs.test"] = &WideIP{Name: "/Common/ecs.test", Type: TypeMX, Pools: []WideIPPool{{Pool: "mx /Common/m"}},
		DecisionLog: LogPoolSelection | LogMemberTraversal | LogMemberSelection}
	var sink syncBuf
	s := newServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&sink, nil))})
	if m := ask(t, s, ecsResolver, "ecs.test.", dns.TypeMX); m == nil || len(m.Answer) != 1 {
		t.Fatalf("answer %v", m)
	}
	want := "[ecs.test MX] [pool member check succeeded (mx1.ecs.test.) - pool member state is available] [pool member check failed (mx2.ecs.test.) - " +
		reasonMemberOff + "] [global-availability selected pool member (mx1.ecs.test.) - preferred method] [round-robin selected pool (/Common/m)]"
	if got := sink.take(); !strings.Contains(got, want) {
		t.Errorf("log lacks %q:\n%s", want, got)
	}
}

func TestParseDecisionLog(t *testing.T) {
	cases := []struct {
		words []string
		want  DecisionLog
		err   string
	}{
		{nil, 0, ""},
		{[]string{"pool-selection"}, LogPoolSelection, ""},
		{[]string{"pool-member-traversal", "pool-traversal"}, LogMemberTraversal | LogPoolTraversal, ""},
		{[]string{"pool-selection", "pool-selection"}, LogPoolSelection, ""},
		{[]string{"pool-selection", "all"}, 0, `"all" is not one of pool-selection, pool-traversal, pool-member-selection, pool-member-traversal`},
	}
	for _, c := range cases {
		got, err := ParseDecisionLog(c.words)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.words, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %v %v, want %v", c.words, got, err, c.want)
		}
		if back, _ := ParseDecisionLog(strings.Fields(got.String())); back != got {
			t.Errorf("%v: String %q reads back as %v", c.words, got.String(), back)
		}
	}
}
