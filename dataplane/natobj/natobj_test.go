package natobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func nat(name, orig, xlat string, disabled bool) config.NAT {
	return config.NAT{Name: name, Orig: netip.MustParseAddr(orig), Xlat: netip.MustParseAddr(xlat), Disabled: disabled}
}

// TestLookup: an enabled NAT's originating address gives its
// translation address, an IPv4-mapped client an IPv4 one; a disabled
// NAT and an address of no NAT give none; the lookup does not allocate;
// no NAT enabled makes a nil table.
func TestLookup(t *testing.T) {
	var r Registry
	tab := r.Build([]config.NAT{
		nat("n1", "127.219.1.10", "127.219.0.10", false),
		nat("n2", "127.219.1.11", "127.219.0.11", false),
		nat("off", "127.219.1.12", "127.219.0.12", true),
		nat("v6", "fd00:219::10", "fd00:219:1::10", false),
		nat("zdup", "127.219.1.10", "127.219.0.13", false), // the daemon refuses it; not entered
	})
	for _, tc := range []struct{ client, want, xlat string }{
		{"127.219.1.10", "n1", "127.219.0.10"},
		{"::ffff:127.219.1.11", "n2", "127.219.0.11"},
		{"127.219.1.12", "", ""},
		{"127.219.1.13", "", ""},
		{"127.219.0.10", "", ""}, // a translation address is not an origin
		{"fd00:219::10", "v6", "fd00:219:1::10"},
	} {
		e := tab.Lookup(netip.MustParseAddr(tc.client))
		got, xlat := "", ""
		if e != nil {
			got, xlat = e.Name, e.Xlat.String()
		}
		if got != tc.want || xlat != tc.xlat {
			t.Errorf("Lookup(%s) = %q %q, want %q %q", tc.client, got, xlat, tc.want, tc.xlat)
		}
	}
	a := netip.MustParseAddr("127.219.1.10")
	if n := testing.AllocsPerRun(100, func() { tab.Lookup(a) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
	if tab := r.Build(nil); tab != nil {
		t.Error("no NAT: want a nil table")
	}
	if tab := r.Build([]config.NAT{nat("off", "127.219.1.12", "127.219.0.12", true)}); tab != nil {
		t.Error("only a disabled NAT: want a nil table")
	}
}

// TestCounters: a NAT's outbound count survives a commit that keeps it
// (disabled too), is zeroed by Reset, and goes with the NAT.
func TestCounters(t *testing.T) {
	var r Registry
	tab := r.Build([]config.NAT{nat("n1", "127.219.1.10", "127.219.0.10", false)})
	e := tab.Lookup(netip.MustParseAddr("127.219.1.10"))
	e.Counted()
	e.Counted()
	if n, ok := r.OutConns("n1"); !ok || n != 2 {
		t.Errorf("OutConns = %d %v, want 2 true", n, ok)
	}
	r.Build([]config.NAT{nat("n1", "127.219.1.10", "127.219.0.10", true)})
	if n, ok := r.OutConns("n1"); !ok || n != 2 {
		t.Errorf("after disabling: OutConns = %d %v, want 2 true", n, ok)
	}
	if !r.Reset("n1") || r.Reset("nosuch") {
		t.Error("Reset: want true for n1, false for a NAT not configured")
	}
	if n, _ := r.OutConns("n1"); n != 0 {
		t.Errorf("after Reset: %d", n)
	}
	r.Build(nil)
	if _, ok := r.OutConns("n1"); ok {
		t.Error("after deleting: still counted")
	}
}
