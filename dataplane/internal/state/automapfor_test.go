package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestAutomapFor: automap gives a client its source where the virtual's
// own SNAT is automap, or, with its SNAT none, where the client's ltm
// snat object (the one admitting its arrival interface) has automap;
// not for a snatpool virtual, an address SNAT object, no object; no
// allocation.
func TestAutomapFor(t *testing.T) {
	var sreg snatobj.Registry
	snats, _, _ := sreg.Build([]config.SNATObject{
		{Name: "am", Origins: []netip.Prefix{netip.MustParsePrefix("127.249.100.0/24")}, Automap: true},
		{Name: "addr", Origins: []netip.Prefix{netip.MustParsePrefix("127.249.101.0/24")}, Addrs: []netip.Addr{netip.MustParseAddr("127.249.109.1")}},
		{Name: "am-on5", Origins: []netip.Prefix{netip.MustParsePrefix("127.249.101.128/25")}, Automap: true,
			VLANs: &config.VLANFilter{Ifindex: []int{5}}},
	}, nil, nil, nil)
	snap := func(typ config.SNATType, tab *snatobj.Table) *VirtualSnap {
		return &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: typ}}, SNATs: tab}
	}
	for _, tc := range []struct {
		name   string
		snap   *VirtualSnap
		client string
		ifx    int
		want   bool
	}{
		{"virtual automap", snap(config.SNATAutomap, nil), "127.249.102.1", 0, true},
		{"virtual snatpool, object automap", snap(config.SNATPool, snats), "127.249.100.1", 0, false},
		{"none, no objects", snap(config.SNATNone, nil), "127.249.100.1", 0, false},
		{"none, object automap", snap(config.SNATNone, snats), "127.249.100.1", 0, true},
		{"unset, object automap", snap("", snats), "127.249.100.1", 0, true},
		{"none, object address", snap(config.SNATNone, snats), "127.249.101.1", 0, false},
		{"none, no object holds it", snap(config.SNATNone, snats), "127.249.102.1", 0, false},
		{"none, automap on its VLAN", snap(config.SNATNone, snats), "127.249.101.200", 5, true},
		{"none, automap not on this VLAN", snap(config.SNATNone, snats), "127.249.101.200", 6, false},
	} {
		if got := tc.snap.AutomapFor(netip.MustParseAddr(tc.client), tc.ifx); got != tc.want {
			t.Errorf("%s: AutomapFor(%s, %d) = %v, want %v", tc.name, tc.client, tc.ifx, got, tc.want)
		}
	}
	s, a := snap(config.SNATNone, snats), netip.MustParseAddr("127.249.100.1")
	if n := testing.AllocsPerRun(100, func() { s.AutomapFor(a, 0) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
