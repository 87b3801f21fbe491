package natobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupIn: a NAT in a route domain translates only the clients of
// the virtuals in it, and one in route domain 0 (no %ID) only those of
// route domain 0; no allocation.
func TestLookupIn(t *testing.T) {
	var r Registry
	rd2 := nat("rd2", "127.60.1.10", "127.60.0.10", false)
	rd2.RouteDomain = 2
	tab := r.Build([]config.NAT{rd2, nat("rd0", "127.60.1.11", "127.60.0.11", false)})
	for _, tc := range []struct {
		client string
		rd     int
		want   string
	}{
		{"127.60.1.10", 2, "rd2"}, {"127.60.1.10", 0, ""}, {"127.60.1.10", 3, ""},
		{"127.60.1.11", 0, "rd0"}, {"127.60.1.11", 2, ""},
		{"127.60.1.12", 2, ""},
	} {
		got := ""
		if e := tab.LookupIn(netip.MustParseAddr(tc.client), 0, tc.rd); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("%s in route domain %d: %q, want %q", tc.client, tc.rd, got, tc.want)
		}
	}
	a := netip.MustParseAddr("127.60.1.10")
	if n := testing.AllocsPerRun(100, func() { tab.LookupIn(a, 0, 0) }); n != 0 {
		t.Errorf("LookupIn allocates %v times", n)
	}
}
