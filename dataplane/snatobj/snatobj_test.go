package snatobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// TestLookup: the most specific origin holding the address wins, over
// both families; an IPv4-mapped client is an IPv4 one; an address in no
// origin has none.
func TestLookup(t *testing.T) {
	var r Registry
	tab, _ := r.Build([]config.SNATObject{
		{Name: "all", Origins: prefixes("0.0.0.0/0"), Automap: true},
		{Name: "net", Origins: prefixes("127.218.1.0/24", "::ffff:127.218.9.0/120"), Addrs: addrs("127.218.0.100")},
		{Name: "host", Origins: prefixes("127.218.1.5/32"), Addrs: addrs("127.218.0.101")},
		{Name: "v6", Origins: prefixes("fd00:218::/48"), Addrs: addrs("fd00:218:1::1")},
	}, nil, nil)
	for _, tc := range []struct{ client, want string }{
		{"127.218.1.5", "host"},
		{"127.218.1.6", "net"},
		{"::ffff:127.218.1.7", "net"},
		{"127.218.9.1", "net"},
		{"10.0.0.1", "all"},
		{"fd00:218:0:1::5", "v6"},
		{"fd00:219::5", ""},
	} {
		got := ""
		if e := tab.Lookup(netip.MustParseAddr(tc.client)); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("Lookup(%s) = %q, want %q", tc.client, got, tc.want)
		}
	}
	a := netip.MustParseAddr("127.218.1.5")
	if n := testing.AllocsPerRun(100, func() { tab.Lookup(a) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
	if tab, _ := r.Build(nil, nil, nil); tab != nil {
		t.Error("no SNAT objects: want a nil table")
	}
}

// TestPickAndCounters: a snatpool's addresses are given in turn, only
// of the server's family, each counted with the SNAT; the counters of
// what a commit keeps survive it, and a snatpool's addresses share
// them.
func TestPickAndCounters(t *testing.T) {
	var r Registry
	objs := []config.SNATObject{{Name: "s", Origins: prefixes("127.218.1.0/24"), Addrs: addrs("127.218.0.100", "127.218.0.101", "fd00::1")}}
	tab, _ := r.Build(objs, nil, nil)
	e := tab.Lookup(netip.MustParseAddr("127.218.1.1"))
	seen := map[netip.Addr]int{}
	for i := 0; i < 3; i++ {
		seen[e.Pick(true, true)]++
	}
	if seen[netip.MustParseAddr("127.218.0.100")] == 0 || seen[netip.MustParseAddr("127.218.0.101")] == 0 || len(seen) != 2 {
		t.Errorf("IPv4 picks: %v", seen)
	}
	if a := e.Pick(false, true); a != netip.MustParseAddr("fd00::1") {
		t.Errorf("IPv6 pick: %v", a)
	}
	if n, _ := r.SNATConns("s"); n != 4 {
		t.Errorf("SNAT connections %d, want 4", n)
	}
	before, _ := r.AddrConns(netip.MustParseAddr("127.218.0.101"))
	_, byPool := r.Build(objs, map[string][]netip.Addr{"/Common/sp": addrs("127.218.0.101")}, nil)
	byPool["/Common/sp"][0].Conns.Add(1)
	if n, ok := r.AddrConns(netip.MustParseAddr("127.218.0.101")); !ok || n != before+1 || before == 0 {
		t.Errorf("127.218.0.101: %d connections (%v), want %d + 1 across the commit", n, ok, before)
	}
	if n, _ := r.SNATConns("s"); n != 4 {
		t.Errorf("SNAT connections %d after a commit, want 4", n)
	}
	r.Build(nil, nil, nil)
	if _, ok := r.SNATConns("s"); ok {
		t.Error("a deleted SNAT still has counters")
	}
	if _, ok := r.AddrConns(netip.MustParseAddr("127.218.0.100")); ok {
		t.Error("an address no longer used still has counters")
	}
	single := []config.SNATObject{{Name: "one", Origins: prefixes("127.218.2.0/24"), Addrs: addrs("fd00::1")}}
	tab, _ = r.Build(single, nil, nil)
	if a := tab.Lookup(netip.MustParseAddr("127.218.2.2")).Pick(true, true); a.IsValid() {
		t.Errorf("no IPv4 address: picked %v", a)
	}
}
