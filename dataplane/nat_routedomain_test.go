package dataplane

import (
	"net/netip"
	"testing"
)

// TestNATVirtualsRouteDomain: the virtuals the plane makes for a NAT's
// way in are in the NAT's route domain, so its route domain's
// flow-eviction context counts them as it counts a virtual whose
// destination has the %ID; a NAT without one makes route domain 0
// virtuals. They take the NAT's reach (the parents its route domain
// reaches) and timer policy (its route domain's).
func TestNATVirtualsRouteDomain(t *testing.T) {
	tp := &TimerPolicy{Name: "/Common/tp"}
	cfg := &Config{NATs: []NAT{
		{Name: "/Common/n2", Orig: netip.MustParseAddr("127.60.30.10"), Xlat: netip.MustParseAddr("127.60.31.10"), RouteDomain: 2,
			RouteDomainReach: []int{0}, Timers: tp},
		{Name: "/Common/n0", Orig: netip.MustParseAddr("127.60.30.11"), Xlat: netip.MustParseAddr("127.60.31.11")},
	}}
	c := withNATVirtuals(cfg)
	for _, tc := range []struct {
		nat string
		rd  int
	}{{"/Common/n2", 2}, {"/Common/n0", 0}} {
		for _, udp := range []bool{false, true} {
			v := c.Virtuals[NATVirtualName(tc.nat, udp)]
			if v == nil {
				t.Fatalf("%s (udp %v): no virtual", tc.nat, udp)
			}
			if v.RouteDomain != tc.rd {
				t.Errorf("%s (udp %v): route domain %d, want %d", tc.nat, udp, v.RouteDomain, tc.rd)
			}
			// The route domains it reaches and its timer policy are the
			// NAT's (none for n0).
			if (v.Timers == tp) != (tc.rd == 2) || (len(v.RouteDomainReach) == 1) != (tc.rd == 2) {
				t.Errorf("%s (udp %v): timers %v, reach %v, want the NAT's", tc.nat, udp, v.Timers, v.RouteDomainReach)
			}
		}
	}
}
