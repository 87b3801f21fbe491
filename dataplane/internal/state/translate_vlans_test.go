package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/natobj"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestSNATSourceVLANs: the source choice of a connection that arrived on
// an interface (SNATSourceHeldOn) passes over a SNAT or NAT whose VLAN
// list does not admit it; SNATSource, which does not know the arrival,
// takes it as 0; AdmitArrival reads the arrival only when the snapshot
// says a list is there; no allocation.
func TestSNATSourceVLANs(t *testing.T) {
	var sreg snatobj.Registry
	snats, _, _ := sreg.Build([]config.SNATObject{
		{Name: "wide", Origins: []netip.Prefix{netip.MustParsePrefix("127.230.0.0/16")}, Addrs: []netip.Addr{netip.MustParseAddr("127.230.9.1")}},
		{Name: "on5", Origins: []netip.Prefix{netip.MustParsePrefix("127.230.1.0/24")}, Addrs: []netip.Addr{netip.MustParseAddr("127.230.9.2")},
			VLANs: &config.VLANFilter{Ifindex: []int{5}}},
	}, nil, nil, nil)
	var nreg natobj.Registry
	nats := nreg.Build([]config.NAT{{Name: "n", Orig: netip.MustParseAddr("127.230.2.10"), Xlat: netip.MustParseAddr("127.230.9.3"),
		VLANs: &config.VLANFilter{Ifindex: []int{5}, Disabled: true}}})
	snap := &VirtualSnap{Cfg: &config.Virtual{Enabled: true, SNAT: config.SNAT{Type: config.SNATNone}}, SNATs: snats, NATs: nats}
	local, dst := netip.MustParseAddrPort("127.230.0.1:30000"), netip.MustParseAddrPort("127.230.0.11:30001")
	vs := &Virtual{}
	for _, tc := range []struct {
		client string
		ifx    int
		want   string
	}{
		{"127.230.1.5:40000", 5, "127.230.9.2"},
		{"127.230.1.5:40000", 6, "127.230.9.1"},
		{"127.230.1.5:40000", 0, "127.230.9.1"},
		{"127.230.2.10:40000", 6, "127.230.9.3"},
		{"127.230.2.10:40000", 5, "127.230.9.1"}, // the NAT passed over: the SNAT of its network
	} {
		h := SNATSourceHeldOn(vs, snap, netip.MustParseAddrPort(tc.client), local, dst, nil, nil, tc.ifx)
		if got := h.Src.Addr().String(); got != tc.want {
			t.Errorf("%s on %d: source %s, want %s", tc.client, tc.ifx, got, tc.want)
		}
	}
	if got := SNATSource(vs, snap, netip.MustParseAddrPort("127.230.1.5:40000"), local, dst, nil, nil); got.Addr().String() != "127.230.9.1" {
		t.Errorf("SNATSource, the arrival unknown: %v, want the SNAT without a list", got)
	}
	client := netip.MustParseAddrPort("127.230.1.5:40000")
	if n := testing.AllocsPerRun(100, func() { SNATSourceHeldOn(vs, snap, client, local, dst, nil, nil, 5) }); n != 0 {
		t.Errorf("SNATSourceHeldOn allocates %v times", n)
	}
	reads := 0
	arrival := func() int { reads++; return 5 }
	vs.Snap.Store(snap)
	if ok, _, ifx := vs.AdmitArrival(snap, client, local, arrival); !ok || ifx != 0 || reads != 0 {
		t.Errorf("no list in the snapshot: admitted %v, arrival %d read %d times; want it unread", ok, ifx, reads)
	}
	snap.SNATArrival = true
	if ok, _, ifx := vs.AdmitArrival(snap, client, local, arrival); !ok || ifx != 5 || reads != 1 {
		t.Errorf("a list in the snapshot: admitted %v, arrival %d read %d times; want 5, once", ok, ifx, reads)
	}
}
