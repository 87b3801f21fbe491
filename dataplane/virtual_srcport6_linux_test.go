//go:build linux

package dataplane

import (
	"net/netip"
	"os/exec"
	"testing"

	"github.com/openltm/openltm/internal/netnstest"
)

// TestVirtualSourcePortIPv6: the virtual's own source-port over IPv6,
// with automap (no self IP: the virtual's address), with a snatpool and
// with none and an ltm nat of the client (its translation address), TCP
// and UDP, as TestVirtualSourcePortTCP and TestVirtualSourcePortUDP
// over IPv4: preserve keeps the client's port (another when it is in
// use on the translation address), change takes another,
// preserve-strict keeps it or resets the TCP client / makes no UDP flow.
// It runs in a network namespace of its own, whose loopback is given
// the fd00:30::/32 addresses the test uses (skipped where that cannot
// be made: no root, no unshare).
func TestVirtualSourcePortIPv6(t *testing.T) {
	if !netnstest.Alone(t, "SRCPORT6_NETNS") {
		return
	}
	for _, a := range []string{"fd00:30::1", "fd00:30::2", "fd00:30::9", "fd00:30::100", "fd00:30::200"} {
		if out, err := exec.Command("ip", "addr", "add", a+"/128", "dev", "lo", "nodad").CombinedOutput(); err != nil {
			t.Fatalf("ip addr add %s: %v %s", a, err, out)
		}
	}
	const vs, member, vsUDP, memberUDP = "[fd00:30::1]:30861", "[fd00:30::2]:30862", "[fd00:30::1]:30863", "[fd00:30::2]:30864"
	client, pooled, natted := netip.MustParseAddr("fd00:30::9"), netip.MustParseAddr("fd00:30::100"), netip.MustParseAddr("fd00:30::200")
	srv := startServer(t, member, "M")
	um := startUDPMember(t, memberUDP, "U")
	next := uint16(33000)
	for _, snat := range []struct {
		name string
		sn   SNAT
		xlat netip.Addr
	}{
		{"automap", SNAT{Type: SNATAutomap}, ap(vs).Addr()},
		{"snatpool", SNAT{Type: SNATPool, Pool: "/Common/sp6"}, pooled},
		{"nat", SNAT{Type: SNATNone}, natted}, // an outbound ltm nat of the client
	} {
		conf := func(change, strict bool) *Config {
			sn := snat.sn
			sn.ChangePort, sn.StrictPort = change, strict
			cfg := basic(vs, member)
			cfg.Virtuals["/Common/vs"].SNAT = sn
			cfg.Virtuals["/Common/vs_udp"] = &Virtual{Name: "/Common/vs_udp", Destination: ap(vsUDP), Enabled: true, Protocol: ProtoUDP,
				TranslateAddress: true, TranslatePort: true, Pool: "/Common/p_udp", SNAT: sn}
			cfg.Pools["/Common/p_udp"] = &Pool{Name: "/Common/p_udp", LBMode: RoundRobin,
				Members: []Member{{Node: "/Common/fd00:30::2", Addr: ap(memberUDP)}}}
			cfg.SnatPools = map[string][]netip.Addr{"/Common/sp6": {pooled}}
			if snat.name == "nat" {
				cfg.NATs = []NAT{{Name: "/Common/n6", Orig: client, Xlat: natted, OutboundOnly: true}}
			}
			return cfg
		}
		xlat := snat.xlat
		for _, tc := range srcportCases {
			t.Run(snat.name+" tcp "+tc.name, func(t *testing.T) {
				port := freePort(t, &next, xlat, client)
				p, _ := loggedPlane(t)
				mustApply(t, p, conf(tc.change, tc.stric))
				srcportTCPCase(t, tc, srv, vs, client, xlat, port)
			})
			t.Run(snat.name+" udp "+tc.name, func(t *testing.T) {
				port := freePort(t, &next, xlat, client)
				p, _ := loggedPlane(t)
				mustApply(t, p, conf(tc.change, tc.stric))
				srcportUDPCase(t, tc, um, vsUDP, client, xlat, port)
			})
		}
	}
}
