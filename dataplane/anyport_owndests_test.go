package dataplane

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/sklookup"
	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/dataplane/socks"
)

// TestOwnDests: what the steering passes over as the plane's own
// destinations: each member's address and port (a member at port any:
// port 0, its address on every port), a monitor's alias address and
// port, a monitor's alias port on every member's and node's address;
// the nameservers the plane asks (sys dns name-servers that are
// addresses, a dns cache's forward-zones and root-hints, an explicit
// proxy's and a socks profile's resolver); the daemon's (OwnDests).
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
		{"nameservers", func(c *Config) {
			c.NameServers = []string{"127.253.3.1", "127.253.3.2:30053", "dns.example"}
			c.Virtuals["/Common/vs"].DNS = &DNSProfile{Cache: &DNSCache{
				Forward:  map[string][]netip.AddrPort{"example.": {ap("127.253.3.3:30053")}},
				Resolver: &recursor.Config{RootHints: []netip.AddrPort{ap("127.253.3.4:53")}}}}
			c.Virtuals["/Common/px"] = &Virtual{Name: "/Common/px", MBLB: &MBLB{ExplicitProxy: &fwdproxy.Config{Resolver: fwdproxy.ResolverConfig{
				Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ap("127.253.3.5:53")}}}}}}}
			c.Virtuals["/Common/sx"] = &Virtual{Name: "/Common/sx", Socks: socks.New(socks.Config{Resolver: &fwdproxy.ResolverConfig{
				Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ap("127.253.3.6:53")}}}}})}
		}, []string{"127.253.1.2:30001", "127.253.1.3:0", "127.253.3.1:53", "127.253.3.2:30053", "127.253.3.3:30053", "127.253.3.4:53", "127.253.3.5:53", "127.253.3.6:53"}},
		{"the daemon's", func(c *Config) {
			c.OwnDests = []netip.AddrPort{ap("127.253.3.7:514"), ap("[fd00:253::7]:389")}
		}, []string{"127.253.1.2:30001", "127.253.1.3:0", "127.253.3.7:514", "[fd00:253::7]:389"}},
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

// TestCheckSteerLimits: Check refuses a configuration the steering could
// not be told whole, naming the limit and the count: more listeners on
// every port than sklookup.MaxWildcards, more destinations passed over
// than sklookup.MaxSpecific (the plane's own ones, once per protocol);
// one at the limit passes; disabled virtuals are counted (they listen).
func TestCheckSteerLimits(t *testing.T) {
	// Wildcards: the wildcard on every port and n addresses on every port.
	wild := func(n int) *Config {
		cfg := basic("0.0.0.0:0", "127.253.1.2:30001")
		cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("0.0.0.0/0")
		for i := range n {
			name := fmt.Sprintf("/Common/a%d", i)
			cfg.Virtuals[name] = &Virtual{Name: name, Destination: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 253, 10 + byte(i/250), 1 + byte(i%250)}), 0),
				Enabled: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
		}
		return cfg
	}
	if err := Check(wild(sklookup.MaxWildcards - 1)); err != nil {
		t.Errorf("%d listeners to steer: %v", sklookup.MaxWildcards, err)
	}
	err := Check(wild(sklookup.MaxWildcards))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d listeners to steer", sklookup.MaxWildcards+1)) ||
		!strings.Contains(err.Error(), fmt.Sprintf("at most %d", sklookup.MaxWildcards)) {
		t.Errorf("%d listeners to steer: %v", sklookup.MaxWildcards+1, err)
	}
	// Disabled virtuals count too: each listens, to reset its clients
	// (continue-matching disabled), so the steering hands it its
	// address [M].
	dis := wild(sklookup.MaxWildcards)
	for _, v := range dis.Virtuals {
		if v.Name != "/Common/vs" {
			v.Enabled = false
		}
	}
	if err := Check(dis); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d listeners to steer", sklookup.MaxWildcards+1)) {
		t.Errorf("%d listeners to steer, disabled: %v", sklookup.MaxWildcards+1, err)
	}
	// Passed over (a TCP wildcard: TCP entries only): the member and n
	// own destinations.
	own := func(n int) *Config {
		cfg := basic("0.0.0.0:0", "127.253.1.2:30001")
		cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("0.0.0.0/0")
		for i := range n {
			cfg.OwnDests = append(cfg.OwnDests, netip.AddrPortFrom(netip.MustParseAddr("127.253.20.1"), uint16(20000+i)))
		}
		return cfg
	}
	if err := Check(own(sklookup.MaxSpecific - 1)); err != nil {
		t.Errorf("%d passed over: %v", sklookup.MaxSpecific, err)
	}
	err = Check(own(sklookup.MaxSpecific))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d destinations to pass over", sklookup.MaxSpecific+1)) ||
		!strings.Contains(err.Error(), fmt.Sprintf("at most %d", sklookup.MaxSpecific)) {
		t.Errorf("%d passed over: %v", sklookup.MaxSpecific+1, err)
	}
	// Without a virtual on every port nothing is steered: no limit.
	cfg := own(sklookup.MaxSpecific)
	cfg.Virtuals["/Common/vs"].Destination, cfg.Virtuals["/Common/vs"].Network = ap("127.253.1.1:30080"), netip.Prefix{}
	if err := Check(cfg); err != nil {
		t.Errorf("nothing steered: %v", err)
	}
}
