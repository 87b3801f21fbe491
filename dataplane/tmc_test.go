package dataplane

import (
	"net/netip"
	"strings"
	"testing"
)

// TestTrafficMatchingListeners: a virtual with several addresses and
// ports (traffic-matching-criteria) answers on every pair; its source
// filter resets a client outside it as a virtual's `source` does; a
// commit that adds an address keeps the running listeners and their open
// flows, and one past the listener bound is refused whole.
func TestTrafficMatchingListeners(t *testing.T) {
	t.Parallel()
	startServer(t, "127.56.20.100:7000", "S1")
	p, _ := newPlane(t)
	mk := func(addrs ...string) *Config {
		cfg := basic("127.56.20.1:0", "127.56.20.100:7000")
		v := cfg.Virtuals["/Common/vs"]
		for _, a := range addrs {
			v.Addresses = append(v.Addresses, netip.MustParseAddr(a))
		}
		v.PortRanges = []PortRange{{Low: 40001, High: 40002}, {Low: 40010, High: 40010}}
		v.Match = NewSourceMatch([]AddrRange{PrefixRange(netip.MustParsePrefix("127.56.21.0/24"))}, nil)
		return cfg
	}
	mustApply(t, p, mk("127.56.20.1", "127.56.20.2", "127.56.20.3"))
	for _, to := range []string{"127.56.20.1:40001", "127.56.20.2:40002", "127.56.20.3:40010", "127.56.20.3:40001"} {
		if a := dialFrom(t, "127.56.21.9", to).mustAsk("hi"); a != "S1 Response" {
			t.Errorf("%s: %q", to, a)
		}
	}
	for _, tc := range []struct{ src, to string }{
		{"127.56.22.9", "127.56.20.1:40001"}, // outside the source filter
		{"127.56.21.9", "127.56.20.4:40001"}, // an address not listed
		{"127.56.21.9", "127.56.20.1:40003"}, // a port not listed
	} {
		if err := tryAsk(tc.src, tc.to); err == nil {
			t.Errorf("%s -> %s answered", tc.src, tc.to)
		}
	}
	held := dialFrom(t, "127.56.21.9", "127.56.20.2:40002")
	held.mustAsk("one")
	mustApply(t, p, mk("127.56.20.1", "127.56.20.2", "127.56.20.3", "127.56.20.4"))
	if a := held.mustAsk("two"); a != "S1 Response" {
		t.Errorf("a flow across the commit: %q", a)
	}
	if a := dialFrom(t, "127.56.21.9", "127.56.20.4:40010").mustAsk("hi"); a != "S1 Response" {
		t.Errorf("the added address: %q", a)
	}
	var many []string
	for i := 0; i < 256; i++ {
		many = append(many, netip.AddrFrom4([4]byte{127, 56, 24, byte(i)}).String())
	}
	big := mk(many...)
	big.Virtuals["/Common/vs"].PortRanges = []PortRange{{Low: 40001, High: 40017}}
	if err := p.Apply(nil, big); err == nil || !strings.Contains(err.Error(), "256 addresses x 17 ports make 4352 listeners; at most 4096") {
		t.Fatalf("Apply past the listener bound: %v", err)
	}
	if a := held.mustAsk("three"); a != "S1 Response" { // the old config still runs
		t.Errorf("after a refused commit: %q", a)
	}
}
