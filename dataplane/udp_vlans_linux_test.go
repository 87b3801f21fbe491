//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"testing"

	"github.com/openltm/openltm/internal/netnstest"
)

// udpDropped is the virtual's udp profile count of dropped datagrams.
func udpDropped(p *Plane) uint64 {
	return p.ProfileStats(ProfileUDP, "udp", []string{"/Common/vs"}).Conns.Dropped
}

// TestUDPVLANsLoopback: a UDP virtual enabled or disabled on VLANs whose
// interface is the loopback, lo, where every datagram of this test
// arrives: enabled on lo alone (the sockets bound to it) or on lo and
// another (each datagram checked) it answers; disabled on lo, or enabled
// only elsewhere, it drops the datagrams and counts them.
func TestUDPVLANsLoopback(t *testing.T) {
	t.Parallel()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	other := lo.Index + 1000 // no interface has it: datagrams never arrive there
	startUDPMember(t, "127.95.2.2:5300", "S1")
	p, _ := newPlane(t)
	for i, tc := range []struct {
		name  string
		vlans *VLANFilter
		ok    bool
	}{
		{"every vlan", nil, true},
		{"enabled on lo, bound", &VLANFilter{Ifindex: []int{lo.Index}, Device: "lo"}, true},
		{"disabled on lo", &VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, false},
		{"enabled on lo and another", &VLANFilter{Ifindex: []int{other, lo.Index}}, true},
		{"enabled elsewhere", &VLANFilter{Ifindex: []int{other}}, false},
		{"disabled elsewhere", &VLANFilter{Ifindex: []int{other}, Disabled: true}, true},
		{"enabled on none", &VLANFilter{}, false},
		{"every vlan again", nil, true},
	} {
		cfg := udpBasic("127.95.2.1:53", "127.95.2.2:5300")
		cfg.Virtuals["/Common/vs"].VLANs = tc.vlans
		mustApply(t, p, cfg)
		u := dialUDP(t, fmt.Sprintf("127.95.2.%d:0", 10+i), "127.95.2.1:53")
		before := udpDropped(p)
		if tc.ok {
			if a := u.mustAsk("q"); a != "S1:q" {
				t.Fatalf("%s: answer %q", tc.name, a)
			}
			if d := udpDropped(p); d != before {
				t.Fatalf("%s: %d datagrams counted dropped", tc.name, d-before)
			}
			continue
		}
		if a := u.ask("q"); a != "" {
			t.Fatalf("%s: answered %q, want the datagram dropped", tc.name, a)
		}
		eventually(t, tc.name+": the dropped datagram counted", func() bool { return udpDropped(p) > before })
	}
}

// udpVLANsNetnsEnv carries the client namespaces' names to the test
// binary run again inside the proxy's namespace.
const udpVLANsNetnsEnv = "OPENLTM_UDP_VLANS_NETNS"

// TestUDPVLANsNetns runs a UDP virtual in a network namespace of its own
// with two veth interfaces, va and vb, each leading to a namespace with
// a client: for each VLAN setting the client behind va and the one
// behind vb are answered or not as BIG-IP would. The virtual's address
// is va's, which the client behind vb reaches through vb. The namespaces
// use 127.95.x addresses with route_localnet, so the host's own
// addresses and routes are not touched.
func TestUDPVLANsNetns(t *testing.T) {
	sides := netnstest.Sides{Test: "TestUDPVLANsNetns", Env: udpVLANsNetnsEnv, Prefix: "oltmu",
		Subnets: [2]string{"127.95.11", "127.95.12"}}
	if a, b, ok := sides.Inside(); ok {
		udpVLANsInNetns(t, a, b)
		return
	}
	sides.Run(t)
}

// dialUDPIn is dialUDP from network namespace ns (named by ip netns):
// the socket is made on a thread moved there for the while, and stays
// in ns.
func dialUDPIn(t *testing.T, ns, vs string) *udpClient {
	t.Helper()
	var u *udpClient
	netnstest.In(t, ns, func() { u = dialUDP(t, "", vs) })
	return u
}

// udpVLANsInNetns is TestUDPVLANsNetns inside the proxy's namespace.
func udpVLANsInNetns(t *testing.T, a, b string) {
	va, vb := netnstest.Ifaces(t)
	startUDPMember(t, "127.95.11.1:5300", "S1")
	p, _ := newPlane(t)
	tests := []struct {
		name     string
		vlans    *VLANFilter
		aOK, bOK bool
	}{
		{"every vlan", nil, true, true},
		{"enabled on va", &VLANFilter{Ifindex: []int{va.Index}, Device: "va"}, true, false},
		{"enabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Device: "vb"}, false, true},
		{"enabled on both", &VLANFilter{Ifindex: []int{va.Index, vb.Index}}, true, true},
		{"disabled on va", &VLANFilter{Ifindex: []int{va.Index}, Disabled: true}, false, true},
		{"disabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Disabled: true}, true, false},
		{"enabled on vb, the check alone", &VLANFilter{Ifindex: []int{vb.Index}}, false, true},
		{"every vlan again", nil, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := udpBasic("127.95.11.1:53", "127.95.11.1:5300")
			cfg.Virtuals["/Common/vs"].VLANs = tc.vlans
			mustApply(t, p, cfg)
			for _, c := range []struct {
				ns string
				ok bool
			}{{a, tc.aOK}, {b, tc.bOK}} {
				u := dialUDPIn(t, c.ns, "127.95.11.1:53")
				if c.ok {
					if got := u.mustAsk("q"); got != "S1:q" {
						t.Errorf("client in %s: got %q", c.ns, got)
					}
				} else if got := u.ask("q"); got != "" {
					t.Errorf("client in %s: got %q, want nothing", c.ns, got)
				}
			}
		})
	}
}
