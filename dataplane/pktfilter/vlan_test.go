package pktfilter

import (
	"net"
	"net/netip"
	"testing"
)

// TestDecideVLAN: a filter with a vlan matches only what arrived on its
// interfaces (an unknown arrival, 0, never); trusted vlans and trusted
// MACs (through the neighbour lookup) exempt what they name; Arrival
// says whether the listeners must read the arrival.
func TestDecideVLAN(t *testing.T) {
	macA := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0a}
	macB := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0b}
	neigh := map[netip.Addr]net.HardwareAddr{netip.MustParseAddr("10.1.1.1"): macA, netip.MustParseAddr("10.1.1.2"): macB}
	look := func(a netip.Addr) net.HardwareAddr { return neigh[a] }
	onVLAN := func(ifs []int) *Filter {
		f := mustFilter(t, "f", 1, Reject, "tcp", false)
		f.VLAN = ifs
		return f
	}
	for _, c := range []struct {
		name    string
		set     *Set
		src     string
		ifx     int
		want    Action
		arrival bool
	}{
		{"vlan: arrived there", &Set{Filters: []*Filter{onVLAN([]int{3, 4})}}, "10.1.1.9", 4, Reject, true},
		{"vlan: arrived elsewhere", &Set{Filters: []*Filter{onVLAN([]int{3, 4})}}, "10.1.1.9", 5, Accept, true},
		{"vlan: arrival unknown", &Set{Filters: []*Filter{onVLAN([]int{3})}}, "10.1.1.9", 0, Accept, true},
		{"vlan without interfaces", &Set{Filters: []*Filter{onVLAN([]int{})}}, "10.1.1.9", 3, Accept, true},
		{"no vlan", &Set{Filters: []*Filter{onVLAN(nil)}}, "10.1.1.9", 0, Reject, false},
		{"trusted vlan", &Set{Default: Reject, TrustedIf: []int{7}}, "10.1.1.9", 7, Accept, true},
		{"not the trusted vlan", &Set{Default: Reject, TrustedIf: []int{7}}, "10.1.1.9", 8, Reject, true},
		{"trusted vlan, arrival unknown", &Set{Default: Reject, TrustedIf: []int{7}}, "10.1.1.9", 0, Reject, true},
		{"trusted mac", &Set{Default: Reject, TrustedMAC: []net.HardwareAddr{macA}, Neighbour: look}, "10.1.1.1", 0, Accept, false},
		{"another mac", &Set{Default: Reject, TrustedMAC: []net.HardwareAddr{macA}, Neighbour: look}, "10.1.1.2", 0, Reject, false},
		{"no neighbour entry", &Set{Default: Reject, TrustedMAC: []net.HardwareAddr{macA}, Neighbour: look}, "10.1.1.3", 0, Reject, false},
	} {
		var h Holder
		h.Store(c.set)
		p := &Packet{Proto: ProtoTCP, Src: netip.AddrPortFrom(netip.MustParseAddr(c.src), 1000), Dst: netip.MustParseAddrPort("10.0.0.1:80"), If: c.ifx}
		if got := h.Decide(p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := h.Arrival(); got != c.arrival {
			t.Errorf("%s: Arrival %v, want %v", c.name, got, c.arrival)
		}
	}
	var off Holder
	if off.Arrival() {
		t.Error("filtering off reads the arrival")
	}
}

// TestDecideVLANAllocs: a filter with a vlan and trusted vlans decide
// without allocating.
func TestDecideVLANAllocs(t *testing.T) {
	f := mustFilter(t, "f", 1, Reject, "tcp", false)
	f.VLAN = []int{3, 4}
	var h Holder
	h.Store(&Set{Filters: []*Filter{f}, TrustedIf: []int{9}})
	p := &Packet{Proto: ProtoTCP, Src: netip.MustParseAddrPort("10.1.1.1:1000"), Dst: netip.MustParseAddrPort("10.0.0.1:80"), If: 4}
	if n := testing.AllocsPerRun(100, func() { h.Decide(p) }); n != 0 {
		t.Errorf("Decide allocates %v times", n)
	}
}
