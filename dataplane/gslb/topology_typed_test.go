package gslb

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// pool-lb-mode topology over HTTPS (and AAAA) pools: a record naming a
// pool by path matches the pool of the asking wide IP's type, so each
// LDNS network gets its pool, and an LDNS no record matches gets the
// tied pools in turn.
func TestTopologyTypedPools(t *testing.T) {
	cfg := svcbConfig()
	pfx := netip.MustParsePrefix
	cfg.Pools["https /Common/east"] = &Pool{Name: "/Common/east", Type: TypeHTTPS, Members: []PoolMember{{Target: "east.ex.test", StaticTarget: true, Priority: 1, SVCB: SVCBParams{ALPN: []string{"h2"}}}}}
	cfg.Pools["https /Common/west"] = &Pool{Name: "/Common/west", Type: TypeHTTPS, Members: []PoolMember{{Target: "west.ex.test", StaticTarget: true, Priority: 1, SVCB: SVCBParams{ALPN: []string{"h3"}}}}}
	cfg.WideIPs["https /Common/geo.ex.test"] = &WideIP{Name: "/Common/geo.ex.test", Type: TypeHTTPS, PoolLBMode: Topology,
		Pools: []WideIPPool{{Pool: "https /Common/east"}, {Pool: "https /Common/west"}}}
	cfg.Pools["aaaa /Common/east"] = &Pool{Name: "/Common/east", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6"}}}
	cfg.Servers["/Common/s"].VirtualServers = append(cfg.Servers["/Common/s"].VirtualServers, &VirtualServer{Name: "v6b", Destination: netip.MustParseAddrPort("[fd00::199:2]:443")})
	cfg.Pools["aaaa /Common/west"] = &Pool{Name: "/Common/west", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6b"}}}
	cfg.WideIPs["aaaa /Common/geo.ex.test"] = &WideIP{Name: "/Common/geo.ex.test", Type: TypeAAAA, PoolLBMode: Topology,
		Pools: []WideIPPool{{Pool: "aaaa /Common/east"}, {Pool: "aaaa /Common/west"}}}
	cfg.Topology = []TopologyRecord{
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.199.6.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/east"}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.199.7.0/24")}, Server: Match{Kind: MatchPool, Name: "/Common/west"}, Score: 100},
	}
	s := newServer(t, cfg, Options{})
	cases := []struct {
		ldns  string
		qtype uint16
		want  string
	}{
		{"127.199.6.1", dns.TypeHTTPS, `geo.ex.test. HTTPS 1 east.ex.test. alpn="h2"`},
		{"127.199.7.1", dns.TypeHTTPS, `geo.ex.test. HTTPS 1 west.ex.test. alpn="h3"`},
		{"127.199.6.1", dns.TypeAAAA, `geo.ex.test. AAAA fd00::170:1`},
		{"127.199.7.1", dns.TypeAAAA, `geo.ex.test. AAAA fd00::199:2`},
	}
	for _, c := range cases {
		for i := 0; i < 4; i++ { // not a turn that happened to fall right
			m := ask(t, s, netip.MustParseAddr(c.ldns), "geo.ex.test.", c.qtype)
			if m == nil {
				t.Fatalf("%s %s: no answer", c.ldns, dns.TypeToString[c.qtype])
			}
			if got := rrData(m.Answer); got != c.want {
				t.Errorf("%s %s #%d: %q, want %q", c.ldns, dns.TypeToString[c.qtype], i, got, c.want)
			}
		}
	}
	// No record matches: the pools tie at 0 and take turns.
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		m := ask(t, s, netip.MustParseAddr("127.199.8.1"), "geo.ex.test.", dns.TypeHTTPS)
		if m != nil {
			seen[rrData(m.Answer)] = true
		}
	}
	if len(seen) != 2 {
		t.Errorf("unmatched LDNS got %v, want both pools in turn", seen)
	}
}
