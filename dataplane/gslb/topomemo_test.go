package gslb

import (
	"net/netip"
	"testing"
)

// TestTopoMemoScoresAsTopology: the reader's memo answers what scoring
// the records answers, whatever the order of clients, members and plans
// (a new plan or client must not be served the scores of the last).
func TestTopoMemoScoresAsTopology(t *testing.T) {
	sub := func(s string) Match { return Match{Kind: MatchSubnet, Prefix: netip.MustParsePrefix(s)} }
	dcm := func(s string) Match { return Match{Kind: MatchDatacenter, Name: s} }
	plans := make([]*plan, 2)
	for i := range plans {
		cfg := testConfig(netip.AddrPort{})
		cfg.Pools["/Common/app_pool"].Mode = Topology
		cfg.Topology = []TopologyRecord{
			{LDNS: sub("127.0.85.0/24"), Server: dcm("/Common/dc-gz"), Score: 10 + i},
			{LDNS: sub("127.0.86.0/24"), Server: dcm("/Common/dc-bj"), Score: 20 + i},
			{LDNS: sub("127.0.86.0/24"), Server: sub(gzCT.String() + "/32"), Score: 30 + i},
		}
		plans[i] = newServer(t, cfg, Options{}).plan.Load()
	}
	clients := []netip.Addr{
		netip.MustParseAddr("127.0.85.1"), netip.MustParseAddr("127.0.86.1"),
		netip.MustParseAddr("127.0.85.1"), netip.MustParseAddr("127.0.87.1"),
		netip.MustParseAddr("127.0.86.9"), netip.MustParseAddr("127.0.86.9"),
	}
	for _, tc := range []struct {
		name string
		gen  uint32 // the memo's generation at the start
	}{
		{"fresh", 0},
		{"generation about to wrap", ^uint32(0) - 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			memo := &topoMemo{gen: tc.gen}
			scored := 0
			for round := 0; round < 2; round++ {
				for pi, p := range plans {
					for _, c := range clients {
						for _, m := range p.pools["/Common/app_pool"].members {
							want, _ := p.topoScore(c, m.topoTarget(), nil)
							if got := memo.score(p, c, m, nil); got != want {
								t.Fatalf("plan %d, client %v, member %s: memo %d, records %d", pi, c, m.name, got, want)
							}
							scored += min(want, 1)
						}
					}
				}
			}
			if scored == 0 {
				t.Fatal("no member scored: the records match nothing")
			}
		})
	}
}
