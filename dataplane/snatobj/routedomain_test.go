package snatobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupIn: a SNAT in another route domain than the virtual's is
// passed over for the next most specific origin; Lookup (an address
// alone) ignores route domains; no allocation.
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
		want   string
	}{
		{"127.60.7.5", 0, "half0"}, {"127.60.7.5", 2, "net2"},
		{"127.60.7.200", 0, "wide0"}, {"127.60.7.200", 2, "net2"}, {"127.60.7.200", 3, ""},
		{"127.60.8.1", 0, "wide0"}, {"127.60.8.1", 2, ""},
		{"::ffff:127.60.7.200", 2, "net2"},
	} {
		got := ""
		if e := tab.LookupIn(netip.MustParseAddr(tc.client), 0, tc.rd); e != nil {
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
	if n := testing.AllocsPerRun(100, func() { tab.LookupIn(a, 0, 0) }); n != 0 {
		t.Errorf("LookupIn allocates %v times", n)
	}
}
