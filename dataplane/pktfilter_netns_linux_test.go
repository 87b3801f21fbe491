package dataplane

import (
	"net"
	"testing"

	"github.com/openltm/openltm/dataplane/pktfilter"
	"github.com/openltm/openltm/internal/netnstest"
)

// pfNetnsEnv carries the client namespaces' names to the test binary run
// again inside the proxy's namespace.
const pfNetnsEnv = "OPENLTM_PKTFILTER_NETNS"

// TestPacketFilterNetns runs a virtual in a network namespace of its own
// with two veth interfaces, va and vb, each leading to a namespace with
// a client: a filter's vlan on va or vb rejects the client behind it
// alone; trusted vb exempts the client behind it from a default reject;
// trusted MAC addresses exempt the client whose MAC (its veth end's, as
// the proxy's neighbour table learnt it) is listed, TCP and UDP alike.
// The namespaces use 127.192.81-82.x with route_localnet, so the host's
// own addresses and routes are not touched.
func TestPacketFilterNetns(t *testing.T) {
	sides := netnstest.Sides{Test: "TestPacketFilterNetns", Env: pfNetnsEnv, Prefix: "oltmp",
		Subnets: [2]string{"127.192.81", "127.192.82"}}
	if a, b, ok := sides.Inside(); ok {
		pfInNetns(t, a, b)
		return
	}
	sides.Run(t)
}

// pfInNetns is TestPacketFilterNetns inside the proxy's namespace.
func pfInNetns(t *testing.T, a, b string) {
	va, vb := netnstest.Ifaces(t)
	var macA, macB net.HardwareAddr
	netnstest.In(t, a, func() {
		if i, err := net.InterfaceByName("ca"); err == nil {
			macA = i.HardwareAddr
		}
	})
	netnstest.In(t, b, func() {
		if i, err := net.InterfaceByName("cb"); err == nil {
			macB = i.HardwareAddr
		}
	})
	if len(macA) != 6 || len(macB) != 6 {
		t.Fatalf("the clients' MACs: %v %v", macA, macB)
	}
	startServer(t, "127.192.81.1:30094", "S1")
	startUDPMember(t, "127.192.81.1:30095", "U1")
	tp, _ := newPlane(t)
	cfg := basic("127.192.81.1:30093", "127.192.81.1:30094")
	// The member's answers must come back to the proxy, not go to the
	// client's namespace.
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
	mustApply(t, tp, cfg)
	up, _ := newPlane(t)
	mustApply(t, up, udpBasic("127.192.81.1:30096", "127.192.81.1:30095"))
	tcp := func(ns, src string) (got string) {
		netnstest.In(t, ns, func() { got = pfOutcome(t, src, "127.192.81.1:30093") })
		return got
	}
	udp := func(ns, want string) string {
		u := dialUDPIn(t, ns, "127.192.81.1:30096")
		got := ""
		for i := 0; i < 5 && got != want; i++ {
			got = udpOutcome(u, "q", 2e9)
		}
		return got
	}
	mk := func(deflt pktfilter.Action, vlan []int, trustedIf []int, macs []net.HardwareAddr) *pktfilter.Set {
		s := pfSet(t, deflt, nil, [4]string{"on-vlan", "1", "reject", ""})
		s.Filters[0].VLAN = vlan
		s.TrustedIf, s.TrustedMAC = trustedIf, macs
		return s
	}
	for _, c := range []struct {
		name         string
		set          *pktfilter.Set
		tcpA, tcpB   string
		udpA, udpB   string
		wantArrival  bool
		neighbourFor string
	}{
		{"no filters", nil, "answer", "answer", "answer", "answer", false, ""},
		{"reject on va", mk(pktfilter.Accept, []int{va.Index}, nil, nil), "reset", "answer", "refused", "answer", true, ""},
		{"reject on vb", mk(pktfilter.Accept, []int{vb.Index}, nil, nil), "answer", "reset", "answer", "refused", true, ""},
		{"vb trusted, default reject", mk(pktfilter.Reject, []int{}, []int{vb.Index}, nil), "reset", "answer", "refused", "answer", true, ""},
		{"a's MAC trusted, default reject", mk(pktfilter.Reject, []int{}, nil, []net.HardwareAddr{macA}), "answer", "reset", "answer", "refused", true, "127.192.81.2"},
		{"b's MAC trusted, default reject", mk(pktfilter.Reject, []int{}, nil, []net.HardwareAddr{macB}), "reset", "answer", "refused", "answer", true, "127.192.82.2"},
	} {
		up.SetPacketFilter(pfCopy(c.set))
		tp.SetPacketFilter(c.set)
		if got := tcp(a, "127.192.81.2"); got != c.tcpA {
			t.Errorf("%s: TCP client behind va: %s, want %s", c.name, got, c.tcpA)
		}
		if got := tcp(b, "127.192.82.2"); got != c.tcpB {
			t.Errorf("%s: TCP client behind vb: %s, want %s", c.name, got, c.tcpB)
		}
		if got := udp(a, c.udpA); got != c.udpA {
			t.Errorf("%s: UDP client behind va: %s, want %s", c.name, got, c.udpA)
		}
		if got := udp(b, c.udpB); got != c.udpB {
			t.Errorf("%s: UDP client behind vb: %s, want %s", c.name, got, c.udpB)
		}
		if c.neighbourFor != "" {
			t.Logf("%s: the neighbour table maps %s to %v", c.name, c.neighbourFor, pktfilter.Neighbour(ap(c.neighbourFor+":0").Addr()))
		}
	}
}
