package dataplane

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/internal/sklookup"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestCheckSteerLimitsHTTP3: an HTTP/3 virtual on a port of an address
// a UDP wildcard steers is counted once among the destinations passed
// over, as the steering is told (its QUIC socket is passed over like a
// plain UDP listener: TestAnyPortHTTP3Beside), never among the
// listeners steered to; under a TCP wildcard only it is not counted
// (nothing of its protocol is steered there); an HTTP/3 network
// virtual is refused (AnyPortUnsupported), not counted as a listener
// the steering would take.
func TestCheckSteerLimitsHTTP3(t *testing.T) {
	h3 := &Virtual{Name: "/Common/h3", Destination: ap("127.26.203.1:30443"), Protocol: ProtoUDP, Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone},
		MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, HTTP3: &http3.Config{}}
	// A wildcard of proto on every port, its member, n own destinations
	// and the HTTP/3 virtual.
	cfgOf := func(proto Protocol, n int) *Config {
		cfg := basic("0.0.0.0:0", "127.26.203.2:30001")
		cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("0.0.0.0/0")
		cfg.Virtuals["/Common/vs"].Protocol = proto
		for i := range n {
			cfg.OwnDests = append(cfg.OwnDests, netip.AddrPortFrom(netip.MustParseAddr("127.26.203.20"), uint16(20000+i)))
		}
		v := *h3
		cfg.Virtuals[v.Name] = &v
		return cfg
	}
	// UDP wildcard: the member, n own destinations, the QUIC socket.
	if err := Check(cfgOf(ProtoUDP, sklookup.MaxSpecific-2)); err != nil {
		t.Errorf("%d passed over with the HTTP/3 virtual: %v", sklookup.MaxSpecific, err)
	}
	err := Check(cfgOf(ProtoUDP, sklookup.MaxSpecific-1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d destinations to pass over", sklookup.MaxSpecific+1)) {
		t.Errorf("%d passed over with the HTTP/3 virtual: %v", sklookup.MaxSpecific+1, err)
	}
	if err != nil && strings.Contains(err.Error(), "listeners to steer") {
		t.Errorf("the HTTP/3 virtual counted as a listener to steer: %v", err)
	}
	wild, specific := steerPlan(cfgOf(ProtoUDP, 0), map[netip.AddrPort]string{},
		map[netip.AddrPort]string{ap("0.0.0.0:0"): "/Common/vs", h3.Destination: h3.Name},
		func(netip.AddrPort, bool) int { return -1 })
	if len(wild) != 1 || wild[0].Addr != netip.IPv4Unspecified() {
		t.Errorf("steered: %v, want the UDP wildcard only", wild)
	}
	want := sklookup.Specific{Addr: h3.Destination, UDP: true}
	found := false
	for _, s := range specific {
		found = found || s == want
	}
	if !found {
		t.Errorf("passed over: %v, want %v among them", specific, want)
	}
	// TCP wildcard only: the QUIC socket's UDP port is not steered, not
	// counted: the member and n own destinations (TCP) reach the limit.
	if err := Check(cfgOf(ProtoTCP, sklookup.MaxSpecific-1)); err != nil {
		t.Errorf("the HTTP/3 virtual under a TCP wildcard counted: %v", err)
	}
	// An HTTP/3 network virtual: refused, saying why.
	cfg := cfgOf(ProtoUDP, 0)
	cfg.Virtuals[h3.Name].Destination, cfg.Virtuals[h3.Name].Network = ap("127.26.203.0:30443"), netip.MustParsePrefix("127.26.203.0/24")
	if err := Check(cfg); err == nil || !strings.Contains(err.Error(), "http3 network virtual") {
		t.Errorf("an HTTP/3 network virtual: %v, want refused", err)
	}
}
