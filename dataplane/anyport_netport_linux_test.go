//go:build linux

package dataplane

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// TestAnyPortNetworkPort: a network virtual on one port (127.249.0.0/16
// on 30080) takes that port of every address of its network and no
// other port (refused); a host virtual on that port of one address takes
// that address, a longer network on every port takes its addresses, the
// network's other ports stay refused; the flow is the usual one (its
// member, counted, its client-side destination in show sys connection
// the address and port the client asked for, automap leaving from the
// address the client reached); a criteria port list on the network
// serves each of its ports; a udp network virtual on a port answers from
// the address and port asked to a connected client, and takes no other
// port; without them, nothing is steered.
func TestAnyPortNetworkPort(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	nm := startServer(t, "127.249.200.1:30090", "N")
	startServer(t, "127.249.200.1:30091", "H")
	startServer(t, "127.249.200.1:30092", "A")
	startServer(t, "127.249.200.1:30093", "L")
	startUDPMember(t, "127.249.200.1:30094", "U")
	fwd := startServer(t, "127.249.230.5:30095", "F")
	p, _ := loggedPlane(t)
	net16 := netip.MustParsePrefix("127.249.0.0/16")
	cfg := basic("127.249.0.0:30080", "127.249.200.1:30090")
	cfg.Virtuals["/Common/vs"].Network = net16
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
	pool := func(name, member string) string {
		cfg.Pools[name] = &Pool{Name: name, LBMode: RoundRobin,
			Members: []Member{{Node: "/Common/127.249.200.1", Addr: ap(member)}}}
		return name
	}
	add := func(name, dst string, network string, pl string) *Virtual {
		v := &Virtual{Name: name, Destination: ap(dst), Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: pl, SNAT: SNAT{Type: SNATNone}}
		if network != "" {
			v.Network = netip.MustParsePrefix(network)
		}
		cfg.Virtuals[name] = v
		return v
	}
	add("/Common/host", "127.249.5.5:30080", "", pool("/Common/ph", "127.249.200.1:30091"))
	add("/Common/any24", "127.249.7.0:0", "127.249.7.0/24", pool("/Common/pa", "127.249.200.1:30092"))
	add("/Common/list", "127.249.0.0:0", "127.249.0.0/16", pool("/Common/pl", "127.249.200.1:30093")).PortRanges = []PortRange{{Low: 30085, High: 30086}}
	udp := add("/Common/udp", "127.249.0.0:30053", "127.249.0.0/16", pool("/Common/pu", "127.249.200.1:30094"))
	udp.Protocol = ProtoUDP
	fv := add("/Common/fwd", "127.249.224.0:30095", "127.249.224.0/20", "")
	fv.IPForward = true
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ dst, want string }{
		{"127.249.5.6:30080", "N Response"}, // the network on its port
		{"127.249.200.9:30080", "N Response"},
		{"127.249.5.5:30080", "H Response"}, // the host virtual on the port wins
		{"127.249.7.1:30080", "A Response"}, // a longer network on every port wins
		{"127.249.7.1:30081", "A Response"},
		{"127.249.6.6:30085", "L Response"}, // the port list
		{"127.249.6.6:30086", "L Response"},
		{"127.249.5.6:30081", ""}, // another port: refused
		{"127.249.5.5:30081", ""},
		{"127.250.5.6:30080", ""},             // outside the network
		{"127.249.230.5:30095", "F Response"}, // ip-forward on the port: where the client was going
	} {
		got, err := askOnce(tc.dst)
		if tc.want == "" {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: %q (%v), want refused", tc.dst, got, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if r := fwd.lastRemote(); r.Addr().String() != "127.249.230.5" {
		t.Errorf("forwarded from %v, want the address the client asked for", r)
	}
	// The ip-forward network's own listener address, and an address where
	// nothing listens: reset, not looped.
	for _, dst := range []string{"127.249.224.0:30095", "127.249.230.6:30095"} {
		if got, err := askOnce(dst); err == nil {
			t.Errorf("%s: %q, want a reset", dst, got)
		}
	}
	if v, _ := p.Virtual("/Common/fwd"); v.ClientSide.TotConns > 3 {
		t.Errorf("ip-forward: %d connections, a loop", v.ClientSide.TotConns)
	}
	// Automap without self IPs leaves from the address the client reached.
	if r := nm.lastRemote(); r.Addr().String() != "127.249.200.9" {
		t.Errorf("automap: the member saw %v, want 127.249.200.9", r)
	}
	// show sys connection: the client side's destination is where the
	// client went.
	c, err := net.DialTimeout("tcp", "127.249.9.9:30080", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cl := &client{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	if got := cl.mustAsk("hold"); got != "N Response" {
		t.Errorf("held: %q", got)
	}
	found := false
	p.Connections(ConnFilter{}, func(r *Connection) bool {
		if r.Virtual == "/Common/vs" && r.CSServer.String() == "127.249.9.9:30080" {
			found = true
		}
		return true
	})
	if !found {
		t.Error("show sys connection: no row to 127.249.9.9:30080")
	}
	c.Close()
	if v, _ := p.Virtual("/Common/vs"); v.ClientSide.TotConns < 3 || v.Destination != "127.249.0.0:30080" {
		t.Errorf("show: %s, %d connections, want at least 3", v.Destination, v.ClientSide.TotConns)
	}
	// UDP: answered from the address and port asked (a connected client).
	if got := dialUDP(t, "", "127.249.3.3:30053").mustAsk("u"); got != "U:u" {
		t.Errorf("udp to the network on its port: %q", got)
	}
	if got := dialUDP(t, "", "127.249.3.3:30054").ask("v"); got != "" {
		t.Errorf("udp to another port: %q", got)
	}
	// The udp virtual's mask taken away: a host virtual on its address,
	// which takes no other address; given back: the network again (its
	// listener bound anew each time).
	udp.Network = netip.Prefix{}
	mustApply(t, p, cfg)
	if got := dialUDP(t, "", "127.249.3.3:30053").ask("w"); got != "" {
		t.Errorf("udp to the network after the mask went: %q", got)
	}
	if got := dialUDP(t, "", "127.249.0.0:30053").mustAsk("x"); got != "U:x" {
		t.Errorf("udp to the host virtual: %q", got)
	}
	every := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		l := p.udpListeners[ap("127.249.0.0:30053")]
		return l != nil && l.Every()
	}
	if every() {
		t.Error("the host virtual's listener still reads every address")
	}
	udp.Network = netip.MustParsePrefix("127.249.0.0/16")
	mustApply(t, p, cfg)
	if !every() {
		t.Error("the network virtual's listener does not read every address")
	}
	if got := dialUDP(t, "", "127.249.3.4:30053").mustAsk("y"); got != "U:y" {
		t.Errorf("udp to the network after the mask came back: %q", got)
	}
	// Without the network virtuals, their ports are refused again.
	mustApply(t, p, basic("127.249.5.5:30080", "127.249.200.1:30091"))
	if _, err := askOnce("127.249.5.6:30080"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after the network virtual went: %v, want refused", err)
	}
	if got, _ := askOnce("127.249.5.5:30080"); got != "H Response" {
		t.Errorf("the host virtual after: %q", got)
	}
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
}
