package gslb

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// load-balancing-mode topology inside one HTTPS pool: each member is
// scored by its ipv4hint (else ipv6hint) and its pool, so each LDNS
// network gets the member near it; members tied at a score take turns;
// with zero scores denied, an LDNS no record matches passes to the
// alternate method. A CNAME pool's members have no address: a pool
// record scores them alike.
func TestTopologyNamePool(t *testing.T) {
	cfg := svcbConfig()
	a, pfx := netip.MustParseAddr, netip.MustParsePrefix
	cfg.Pools["https /Common/near"] = &Pool{Name: "/Common/near", Type: TypeHTTPS, Mode: Topology, Alternate: GlobalAvailability, MaxAnswers: 1, Members: []PoolMember{
		{Target: "east.ex.test", StaticTarget: true, Priority: 1, SVCB: SVCBParams{IPv4Hint: []netip.Addr{a("127.204.91.1")}}},
		{Target: "west.ex.test", StaticTarget: true, Priority: 1, Order: 1, SVCB: SVCBParams{IPv4Hint: []netip.Addr{a("127.204.92.1")}}},
		{Target: "v6.ex.test", StaticTarget: true, Priority: 1, Order: 2, SVCB: SVCBParams{IPv6Hint: []netip.Addr{a("fd00::204:93")}}},
	}}
	cfg.WideIPs["https /Common/near.ex.test"] = &WideIP{Name: "/Common/near.ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/near"}}}
	cfg.Pools["cname /Common/c"] = &Pool{Name: "/Common/c", Type: TypeCNAME, Mode: Topology, Members: []PoolMember{
		{Target: "one.example.net", StaticTarget: true}, {Target: "two.example.net", StaticTarget: true, Order: 1}}}
	cfg.WideIPs["cname /Common/c.ex.test"] = &WideIP{Name: "/Common/c.ex.test", Type: TypeCNAME, Pools: []WideIPPool{{Pool: "cname /Common/c"}}}
	cfg.Topology = []TopologyRecord{
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.204.95.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.204.91.0/24")}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.204.96.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.204.92.0/24")}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.204.97.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("fd00::204:0/112")}, Score: 100},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.204.98.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.204.0.0/16")}, Score: 50},
		{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.204.0.0/16")}, Server: Match{Kind: MatchPool, Name: "/Common/c"}, Score: 10},
	}
	target := func(m *dns.Msg) string {
		if m == nil || len(m.Answer) == 0 {
			return ""
		}
		switch rr := m.Answer[0].(type) {
		case *dns.HTTPS:
			return rr.Target
		case *dns.CNAME:
			return rr.Target
		}
		return "?"
	}
	for _, deny := range []bool{false, true} {
		cfg.Settings.TopologyDenyZeroScores = deny
		s := newServer(t, cfg, Options{})
		for _, c := range []struct {
			ldns, name string
			qtype      uint16
			want       []string // the targets seen over six queries
		}{
			{"127.204.95.5", "near.ex.test.", dns.TypeHTTPS, []string{"east.ex.test."}},
			{"127.204.96.5", "near.ex.test.", dns.TypeHTTPS, []string{"west.ex.test."}},
			{"127.204.97.5", "near.ex.test.", dns.TypeHTTPS, []string{"v6.ex.test."}},
			// 127.204.0.0/16 holds both IPv4 hints: they tie and take turns.
			{"127.204.98.5", "near.ex.test.", dns.TypeHTTPS, []string{"east.ex.test.", "west.ex.test."}},
			// No record: all tie at 0 and take turns, or, zero scores
			// denied, the alternate method (global-availability) answers.
			{"127.204.99.5", "near.ex.test.", dns.TypeHTTPS, map[bool][]string{false: {"east.ex.test.", "west.ex.test.", "v6.ex.test."}, true: {"east.ex.test."}}[deny]},
			{"127.204.95.5", "c.ex.test.", dns.TypeCNAME, []string{"one.example.net.", "two.example.net."}},
		} {
			seen := map[string]bool{}
			for i := 0; i < 6; i++ {
				seen[target(ask(t, s, netip.MustParseAddr(c.ldns), c.name, c.qtype))] = true
			}
			ok := len(seen) == len(c.want)
			for _, w := range c.want {
				ok = ok && seen[w]
			}
			if !ok {
				t.Errorf("deny zero %v, %s asking %s: %v, want %v", deny, c.ldns, c.name, seen, c.want)
			}
		}
	}
}
