//go:build linux

package dataplane

import (
	"net/netip"
	"testing"
)

// TestVirtualSourcePortNAT: a client an ltm nat translates, through a
// virtual with source-address-translation none, leaves from the NAT's
// translation address with the port the virtual's own source-port
// gives (a NAT has none of its own [M]): preserve keeps the client's
// port (another when it is in use there), change takes another,
// preserve-strict keeps it or resets the client; UDP alike (no server
// flow for preserve-strict with the port in use). The NAT is outbound
// only, so no every-port steering is needed.
func TestVirtualSourcePortNAT(t *testing.T) {
	const vs, member, vsUDP, memberUDP = "127.30.2.1:30841", "127.30.2.2:30842", "127.30.2.3:30843", "127.30.2.4:30844"
	client, xlat := netip.MustParseAddr("127.30.2.9"), netip.MustParseAddr("127.30.2.100")
	srv := startServer(t, member, "M")
	um := startUDPMember(t, memberUDP, "U")
	next := uint16(32600)
	conf := func(change, strict bool) *Config {
		cfg := basic(vs, member)
		cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATNone, ChangePort: change, StrictPort: strict}
		cfg.Virtuals["/Common/vs_udp"] = &Virtual{Name: "/Common/vs_udp", Destination: ap(vsUDP), Enabled: true, Protocol: ProtoUDP,
			TranslateAddress: true, TranslatePort: true, Pool: "/Common/p_udp", SNAT: SNAT{Type: SNATNone, ChangePort: change, StrictPort: strict}}
		cfg.Pools["/Common/p_udp"] = &Pool{Name: "/Common/p_udp", LBMode: RoundRobin,
			Members: []Member{{Node: "/Common/" + ap(memberUDP).Addr().String(), Addr: ap(memberUDP)}}}
		cfg.NATs = []NAT{{Name: "/Common/n1", Orig: client, Xlat: xlat, OutboundOnly: true}}
		return cfg
	}
	for _, tc := range srcportCases {
		t.Run("tcp "+tc.name, func(t *testing.T) {
			port := freePort(t, &next, xlat, client)
			p, _ := loggedPlane(t)
			mustApply(t, p, conf(tc.change, tc.stric))
			srcportTCPCase(t, tc, srv, vs, client, xlat, port)
		})
		t.Run("udp "+tc.name, func(t *testing.T) {
			port := freePort(t, &next, xlat, client)
			p, _ := loggedPlane(t)
			mustApply(t, p, conf(tc.change, tc.stric))
			srcportUDPCase(t, tc, um, vsUDP, client, xlat, port)
		})
	}
}
