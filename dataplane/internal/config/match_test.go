package config

import (
	"net/netip"
	"strings"
	"testing"
)

func TestPrefixRange(t *testing.T) {
	for _, tc := range []struct{ p, lo, hi string }{
		{"10.0.0.0/24", "10.0.0.0", "10.0.0.255"},
		{"10.0.0.7/32", "10.0.0.7", "10.0.0.7"},
		{"10.0.0.9/30", "10.0.0.8", "10.0.0.11"},
		{"0.0.0.0/0", "0.0.0.0", "255.255.255.255"},
		{"2001:db8::/126", "2001:db8::", "2001:db8::3"},
	} {
		r := PrefixRange(netip.MustParsePrefix(tc.p))
		if r.Low.String() != tc.lo || r.High.String() != tc.hi {
			t.Errorf("%s: %v-%v, want %s-%s", tc.p, r.Low, r.High, tc.lo, tc.hi)
		}
	}
}

func TestSourceMatch(t *testing.T) {
	rng := func(lo, hi string) AddrRange {
		return AddrRange{Low: netip.MustParseAddr(lo), High: netip.MustParseAddr(hi)}
	}
	if NewSourceMatch(nil, nil) != nil {
		t.Fatal("an empty filter is not nil")
	}
	var none *SourceMatch
	if !none.Admits(netip.MustParseAddrPort("1.2.3.4:5")) {
		t.Fatal("a nil filter refuses")
	}
	m := NewSourceMatch([]AddrRange{
		rng("10.0.0.8", "10.0.0.15"), rng("10.0.0.0", "10.0.0.3"), rng("10.0.0.4", "10.0.0.4"),
		rng("10.0.1.0", "10.0.1.0"), rng("2001:db8::1", "2001:db8::5"), rng("10.0.0.12", "10.0.0.20"),
	}, nil)
	if len(m.Addrs) != 4 { // 10.0.0.0-4 merge, 8-15 and 12-20 merge
		t.Errorf("merged ranges: %v", m.Addrs)
	}
	ports := NewSourceMatch(nil, []PortRange{{2000, 2999}, {1000, 1000}, {1001, 1500}, {1400, 1600}})
	if len(ports.Ports) != 2 {
		t.Errorf("merged ports: %v", ports.Ports)
	}
	both := NewSourceMatch([]AddrRange{rng("10.0.0.0", "10.0.0.255")}, []PortRange{{1000, 1999}})
	// A source list of names none of which resolves: no address passes,
	// whatever the ports.
	noAddrs := &SourceMatch{NoAddrs: true}
	noAddrsPorts := &SourceMatch{Ports: []PortRange{{1000, 1999}}, NoAddrs: true}
	for _, tc := range []struct {
		m      *SourceMatch
		client string
		want   bool
	}{
		{m, "10.0.0.0:1", true},
		{m, "10.0.0.4:1", true},
		{m, "10.0.0.5:1", false},
		{m, "10.0.0.8:1", true},
		{m, "10.0.0.20:1", true},
		{m, "10.0.0.21:1", false},
		{m, "10.0.1.0:1", true},
		{m, "9.255.255.255:1", false},
		{m, "[2001:db8::3]:1", true},
		{m, "[2001:db8::6]:1", false},
		{m, "[::ffff:10.0.0.2]:1", true}, // a mapped client is its IPv4 address
		{m, "[::a00:2]:1", false},        // not the same as 10.0.0.2
		{ports, "1.1.1.1:1000", true},
		{ports, "1.1.1.1:1600", true},
		{ports, "1.1.1.1:1601", false},
		{ports, "1.1.1.1:999", false},
		{ports, "1.1.1.1:2999", true},
		{ports, "1.1.1.1:3000", false},
		{both, "10.0.0.9:1500", true},
		{both, "10.0.0.9:2500", false},
		{both, "10.0.1.9:1500", false},
		{noAddrs, "10.0.0.9:1500", false},
		{noAddrs, "[::1]:1500", false},
		{noAddrsPorts, "10.0.0.9:1500", false},
	} {
		if got := tc.m.Admits(netip.MustParseAddrPort(tc.client)); got != tc.want {
			t.Errorf("%v admits %s: %v, want %v", tc.m, tc.client, got, tc.want)
		}
	}
}

func TestListeners(t *testing.T) {
	addrs := func(n int) []netip.Addr {
		var out []netip.Addr
		for i := 0; i < n; i++ {
			out = append(out, netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		v      Virtual
		n      int
		errHas string
	}{
		{"one address one port", Virtual{Destination: netip.MustParseAddrPort("10.0.0.1:80")}, 1, ""},
		{"one address, ranges", Virtual{Destination: netip.MustParseAddrPort("10.0.0.1:0"), PortRanges: []PortRange{{80, 81}, {81, 90}}}, 11, ""},
		{"addresses x ports", Virtual{Destination: netip.MustParseAddrPort("10.0.0.0:0"), Addresses: addrs(3), PortRanges: []PortRange{{80, 81}}}, 6, ""},
		{"addresses on the destination port", Virtual{Destination: netip.MustParseAddrPort("10.0.0.0:80"), Addresses: addrs(4)}, 4, ""},
		{"address bound", Virtual{Destination: netip.MustParseAddrPort("10.0.0.0:80"), Addresses: addrs(257)}, 0, "257 destination addresses; at most 256"},
		{"listener bound", Virtual{Destination: netip.MustParseAddrPort("10.0.0.0:0"), Addresses: addrs(256), PortRanges: []PortRange{{1, 17}}}, 0, "make 4352 listeners"},
		{"at the listener bound", Virtual{Destination: netip.MustParseAddrPort("10.0.0.0:0"), Addresses: addrs(256), PortRanges: []PortRange{{1, 16}}}, 4096, ""},
		{"port any alone", Virtual{Destination: netip.MustParseAddrPort("10.0.0.1:0"), Addresses: addrs(2)}, 2, ""}, // every port of each: at port 0
	} {
		l, err := tc.v.Listeners()
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.errHas)
			}
			continue
		}
		if err != nil || len(l) != tc.n {
			t.Errorf("%s: %d listeners, %v; want %d", tc.name, len(l), err, tc.n)
		}
		seen := map[netip.AddrPort]bool{}
		for _, ap := range l {
			if seen[ap] {
				t.Errorf("%s: %v twice", tc.name, ap)
			}
			seen[ap] = true
		}
	}
}

// TestSourceMatchAllocs: the per-connection check allocates nothing.
func TestSourceMatchAllocs(t *testing.T) {
	m := NewSourceMatch([]AddrRange{PrefixRange(netip.MustParsePrefix("10.0.0.0/8")), PrefixRange(netip.MustParsePrefix("2001:db8::/32"))}, []PortRange{{1024, 65535}})
	c := netip.MustParseAddrPort("[::ffff:10.1.2.3]:40000")
	if n := testing.AllocsPerRun(100, func() { m.Admits(c) }); n != 0 {
		t.Errorf("Admits allocates %v times", n)
	}
}
