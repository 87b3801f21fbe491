package snatobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestLookupOn: a SNAT whose VLAN list does not admit the connection's
// arrival interface is passed over for the next most specific origin
// (an unknown arrival, 0, as vlans-disabled admits it); Lookup ignores
// the lists; Arrival says whether any list is there; no allocation.
func TestLookupOn(t *testing.T) {
	var r Registry
	tab, _, _ := r.Build([]config.SNATObject{
		{Name: "wide", Origins: prefixes("10.0.0.0/8"), Addrs: addrs("192.0.2.1")},
		{Name: "on5", Origins: prefixes("10.1.0.0/16"), Addrs: addrs("192.0.2.2"), VLANs: &config.VLANFilter{Ifindex: []int{5}}},
		{Name: "off5", Origins: prefixes("10.1.2.0/24"), Addrs: addrs("192.0.2.3"), VLANs: &config.VLANFilter{Ifindex: []int{5}, Disabled: true}},
	}, nil, nil, nil)
	if !tab.Arrival() {
		t.Error("a SNAT has a VLAN list: Arrival false")
	}
	for _, tc := range []struct {
		client string
		ifx    int
		want   string
	}{
		{"10.1.1.1", 5, "on5"}, {"10.1.1.1", 6, "wide"}, {"10.1.1.1", 0, "wide"},
		{"10.1.2.1", 5, "on5"}, {"10.1.2.1", 6, "off5"}, {"10.1.2.1", 0, "off5"},
		{"10.2.0.1", 5, "wide"},
		{"::ffff:10.1.1.1", 5, "on5"},
	} {
		got := ""
		if e := tab.LookupOn(netip.MustParseAddr(tc.client), tc.ifx); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("%s on %d: %q, want %q", tc.client, tc.ifx, got, tc.want)
		}
	}
	if e := tab.Lookup(netip.MustParseAddr("10.1.2.1")); e == nil || e.Name != "off5" {
		t.Errorf("Lookup: %v, want off5 whatever its list", e)
	}
	a := netip.MustParseAddr("10.1.2.1")
	if n := testing.AllocsPerRun(100, func() { tab.LookupOn(a, 5) }); n != 0 {
		t.Errorf("LookupOn allocates %v times", n)
	}
	var r2 Registry
	if tab2, _, _ := r2.Build([]config.SNATObject{{Name: "wide", Origins: prefixes("10.0.0.0/8"), Automap: true}}, nil, nil, nil); tab2.Arrival() || (*Table)(nil).Arrival() {
		t.Error("no VLAN list: Arrival true")
	}
}
