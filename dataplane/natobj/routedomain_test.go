package natobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupIn: a NAT in a route domain translates only the clients of
// the virtuals in it, and one in route domain 0 (no %ID) only those of
// route domain 0, unless the virtual's route domain reaches the NAT's
// (strict isolation disabled, config.Virtual.RouteDomainReach); no
// allocation.
func TestLookupIn(t *testing.T) {
	var r Registry
	rd2 := nat("rd2", "127.60.1.10", "127.60.0.10", false)
	rd2.RouteDomain = 2
	tab := r.Build([]config.NAT{rd2, nat("rd0", "127.60.1.11", "127.60.0.11", false)})
	for _, tc := range []struct {
		client string
		rd     int
		reach  []int
		want   string
	}{
		{"127.60.1.10", 2, nil, "rd2"}, {"127.60.1.10", 0, nil, ""}, {"127.60.1.10", 3, nil, ""},
		{"127.60.1.11", 0, nil, "rd0"}, {"127.60.1.11", 2, nil, ""},
		{"127.60.1.12", 2, nil, ""},
		// Route domain 3 reaches its parent 2, then 0.
		{"127.60.1.10", 3, []int{2, 0}, "rd2"}, {"127.60.1.11", 3, []int{2, 0}, "rd0"},
		{"127.60.1.11", 3, []int{2}, ""}, {"127.60.1.12", 3, []int{2, 0}, ""},
		// A parent does not reach its child.
		{"127.60.1.10", 0, []int{5}, ""},
	} {
		got := ""
		if e := tab.LookupIn(netip.MustParseAddr(tc.client), 0, tc.rd, tc.reach); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("%s in route domain %d: %q, want %q", tc.client, tc.rd, got, tc.want)
		}
	}
	a := netip.MustParseAddr("127.60.1.10")
	reach := []int{7, 2}
	if n := testing.AllocsPerRun(100, func() { tab.LookupIn(a, 0, 0, nil); tab.LookupIn(a, 0, 3, reach) }); n != 0 {
		t.Errorf("LookupIn allocates %v times", n)
	}
}
