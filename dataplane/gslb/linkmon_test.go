package gslb

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/dataplane/monitor"
)

// A link's monitor probes its router addresses: while it finds every one
// down the link is down and the virtual server behind it leaves the
// answers; one router answering keeps the link up.
func TestLinkMonitor(t *testing.T) {
	// A router that answers the tcp check at this port, and one that
	// refuses it.
	up, err := net.Listen("tcp", "127.94.40.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	port := up.Addr().(*net.TCPAddr).AddrPort().Port()
	upRouter, deadRouter := netip.MustParseAddr("127.94.40.1"), netip.MustParseAddr("127.94.40.2")
	spec := &monitor.Spec{Name: "/Common/router_tcp", Type: monitor.TCP, Interval: 50 * time.Millisecond, Timeout: 2 * time.Second, DownOnResponse: true}
	mon := Monitor{Spec: spec, Destination: netip.AddrPortFrom(netip.IPv4Unspecified(), port)}
	overLink, other := netip.MustParseAddrPort("127.94.41.10:80"), netip.MustParseAddrPort("127.94.42.10:80")
	cases := []struct {
		name    string
		routers []netip.Addr
		monitor Monitor
		linkUp  bool
	}{
		{"one router answers: up", []netip.Addr{deadRouter, upRouter}, mon, true},
		{"every router down: the link is down", []netip.Addr{deadRouter}, mon, false},
		{"no monitor: routers are not probed", []netip.Addr{deadRouter}, Monitor{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			listen := freeAddr(t, "127.94.40.53")
			cfg := &Config{
				Listeners:   []Listener{{Name: "/Common/l", Addr: listen, Protocol: "udp"}},
				Datacenters: map[string]*Datacenter{"/Common/dc1": {Name: "/Common/dc1"}},
				Links:       map[string]*Link{"/Common/isp1": {Name: "/Common/isp1", Datacenter: "/Common/dc1", Monitor: tc.monitor, RouterAddresses: tc.routers}},
				Servers: map[string]*Host{"/Common/s": {Name: "/Common/s", Datacenter: "/Common/dc1", VirtualServers: []*VirtualServer{
					{Name: "a", Destination: overLink, Link: "/Common/isp1"}, {Name: "b", Destination: other}}}},
				Pools: map[string]*Pool{Key(TypeA, "/Common/p"): {Name: "/Common/p", Mode: GlobalAvailability, Members: []PoolMember{
					{Server: "/Common/s", VirtualServer: "a", Order: 0}, {Server: "/Common/s", VirtualServer: "b", Order: 1}}}},
				WideIPs: map[string]*WideIP{Key(TypeA, "/Common/www.link.test"): {Name: "/Common/www.link.test", Pools: []WideIPPool{{Pool: Key(TypeA, "/Common/p")}}}},
			}
			s := newServer(t, cfg, Options{})
			linkShow := func() LinkStats {
				for _, l := range s.Links() {
					return l
				}
				return LinkStats{}
			}
			if tc.monitor.Spec != nil {
				// Every router probed: up where the check is answered.
				waitFor(t, "the routers probed", func() bool {
					rs := linkShow().Routers
					for _, r := range rs {
						if r.Monitor != map[bool]Status{true: StatusUp, false: StatusDown}[r.Address == upRouter.String()] {
							return false
						}
					}
					return len(rs) == len(tc.routers)
				})
			}
			want := overLink.Addr()
			if !tc.linkUp {
				want = other.Addr()
			}
			waitFor(t, "the answer "+want.String(), func() bool {
				m, err := gslbtest.Query(netip.MustParseAddr("127.94.40.5"), listen, "udp", "www.link.test.", dns.TypeA, 2*time.Second)
				got := gslbtest.Addrs(m)
				return err == nil && len(got) == 1 && got[0] == want
			})
			l := linkShow()
			if (l.Status.Availability == Available) != tc.linkUp {
				t.Errorf("link status %+v, want available %v", l.Status, tc.linkUp)
			}
			if !tc.linkUp && l.Status.Reason != reasonLinkMonitor {
				t.Errorf("reason %q", l.Status.Reason)
			}
			if tc.monitor.Spec != nil && len(l.Routers) != len(tc.routers) {
				t.Errorf("routers shown %+v", l.Routers)
			}
		})
	}
}
