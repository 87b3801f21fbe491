package natobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupOn: a NAT with a VLAN list translates only the connections
// arriving on (or, vlans-disabled, not on) its interfaces, an unknown
// arrival (0) as vlans-disabled admits it; one without a list every
// arrival; Arrival says whether any list is there; no allocation.
func TestLookupOn(t *testing.T) {
	var r Registry
	on := nat("on", "127.219.1.10", "127.219.0.10", false)
	on.VLANs = &config.VLANFilter{Ifindex: []int{5}}
	off := nat("off", "127.219.1.11", "127.219.0.11", false)
	off.VLANs = &config.VLANFilter{Ifindex: []int{5}, Disabled: true}
	tab := r.Build([]config.NAT{on, off, nat("all", "127.219.1.12", "127.219.0.12", false)})
	if !tab.Arrival() {
		t.Error("a NAT has a VLAN list: Arrival false")
	}
	for _, tc := range []struct {
		client string
		ifx    int
		want   string
	}{
		{"127.219.1.10", 5, "on"}, {"127.219.1.10", 6, ""}, {"127.219.1.10", 0, ""},
		{"127.219.1.11", 5, ""}, {"127.219.1.11", 6, "off"}, {"127.219.1.11", 0, "off"},
		{"127.219.1.12", 5, "all"}, {"127.219.1.12", 0, "all"},
	} {
		got := ""
		if e := tab.LookupOn(netip.MustParseAddr(tc.client), tc.ifx); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("%s on %d: %q, want %q", tc.client, tc.ifx, got, tc.want)
		}
	}
	a := netip.MustParseAddr("127.219.1.10")
	if n := testing.AllocsPerRun(100, func() { tab.LookupOn(a, 6) }); n != 0 {
		t.Errorf("LookupOn allocates %v times", n)
	}
	var r2 Registry
	if r2.Build([]config.NAT{nat("all", "127.219.1.12", "127.219.0.12", false)}).Arrival() || (*Table)(nil).Arrival() {
		t.Error("no VLAN list: Arrival true")
	}
}
