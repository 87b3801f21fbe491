package dataplane

import (
	"net/netip"
	"slices"
	"testing"
)

// TestOwnDests: what the steering passes over as the plane's own
// destinations: each member's address and port (a member at port any:
// port 0, its address on every port), a monitor's alias address and
// port, a monitor's alias port on every member's and node's address.
func TestOwnDests(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		want []string
	}{
		{"members", func(c *Config) {}, []string{"127.253.1.2:30001", "127.253.1.3:0"}},
		{"alias address", func(c *Config) {
			c.Monitors["/Common/m"] = &Monitor{Name: "/Common/m", Type: MonitorTCP, Destination: ap("127.253.2.2:30099")}
		}, []string{"127.253.1.2:30001", "127.253.1.3:0", "127.253.2.2:30099"}},
		{"alias port", func(c *Config) {
			c.Monitors["/Common/m"] = &Monitor{Name: "/Common/m", Type: MonitorTCP, Destination: netip.AddrPortFrom(netip.Addr{}, 30099)}
			c.Nodes = map[string]*Node{"/Common/n": {Name: "/Common/n", Addr: netip.MustParseAddr("127.253.2.4")}}
		}, []string{"127.253.1.2:30001", "127.253.1.2:30099", "127.253.1.3:0", "127.253.1.3:30099", "127.253.2.4:30099"}},
	} {
		cfg := basic("0.0.0.0:0", "127.253.1.2:30001", "127.253.1.3:0")
		tc.cfg(cfg)
		var got []string
		for d := range ownDests(cfg) {
			got = append(got, d.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
