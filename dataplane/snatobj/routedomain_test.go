package snatobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupIn: a SNAT in another route domain than the virtual's is
// passed over for the next most specific origin; Lookup (an address
// alone) ignores route domains; a virtual whose route domain reaches
// its parents (strict isolation disabled, config.Virtual.RouteDomainReach)
// takes a parent's SNAT only when none of its own route domain holds
// the client, the nearest parent first; no allocation.
func TestLookupIn(t *testing.T) {
	var r Registry
	tab, _, _ := r.Build([]config.SNATObject{
		{Name: "wide0", Origins: prefixes("127.60.0.0/16"), Addrs: addrs("192.0.2.1")},
		{Name: "net2", Origins: prefixes("127.60.7.0/24"), Addrs: addrs("192.0.2.2"), RouteDomain: 2},
		{Name: "half0", Origins: prefixes("127.60.7.0/25"), Addrs: addrs("192.0.2.3")},
	}, nil, nil, nil)
	for _, tc := range []struct {
		client string
		rd     int
		reach  []int
		want   string
	}{
		{"127.60.7.5", 0, nil, "half0"}, {"127.60.7.5", 2, nil, "net2"},
		{"127.60.7.200", 0, nil, "wide0"}, {"127.60.7.200", 2, nil, "net2"}, {"127.60.7.200", 3, nil, ""},
		{"127.60.8.1", 0, nil, "wide0"}, {"127.60.8.1", 2, nil, ""},
		{"::ffff:127.60.7.200", 2, nil, "net2"},
		// Route domain 2 reaching 0: its own SNAT first, though half0
		// is more specific; 0's where none of 2's holds the client.
		{"127.60.7.5", 2, []int{0}, "net2"}, {"127.60.8.1", 2, []int{0}, "wide0"},
		// Route domain 3 reaching 2, then 0: the nearest parent first.
		{"127.60.7.5", 3, []int{2, 0}, "net2"}, {"127.60.8.1", 3, []int{2, 0}, "wide0"},
		{"127.60.8.1", 3, []int{2}, ""}, {"127.61.0.1", 3, []int{2, 0}, ""},
	} {
		got := ""
		if e := tab.LookupIn(netip.MustParseAddr(tc.client), 0, tc.rd, tc.reach); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("%s in route domain %d: %q, want %q", tc.client, tc.rd, got, tc.want)
		}
	}
	if e := tab.Lookup(netip.MustParseAddr("127.60.7.200")); e == nil || e.Name != "net2" {
		t.Errorf("Lookup 127.60.7.200: %v, want net2", e)
	}
	a := netip.MustParseAddr("127.60.7.200")
	reach := []int{2, 0}
	if n := testing.AllocsPerRun(100, func() { tab.LookupIn(a, 0, 0, nil); tab.LookupIn(a, 0, 3, reach) }); n != 0 {
		t.Errorf("LookupIn allocates %v times", n)
	}
}
