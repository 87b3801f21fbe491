//go:build linux

package dataplane

import (
	"net/netip"
	"os/exec"
	"testing"
	"time"
)

// TestAnyPortWildcard: in a namespace of its own, wildcard virtuals
// (`0.0.0.0:30080 mask any`, `0.0.0.0:any mask any`, udp ones on every
// port and on a port, an ip-forward one on a port) take every address of the
// namespace, below what is more specific, as on BIG-IP: a host virtual,
// an address on every port, a longer network, then the wildcard on the
// port, then the wildcard on every port. A member on an address of the
// namespace is reached through a host virtual and through the wildcard
// on every port itself: the plane's connections to its members are not
// taken again by the wildcard (sklookup passes the members' destinations
// over), while the member address's other ports are the wildcard's; a
// monitor's probe on an alias port is not taken either. The IPv6
// wildcard (::/0 on every port) takes an IPv6 network delivered locally.
func TestAnyPortWildcard(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	m1 := startServer(t, "127.253.1.2:30001", "M1")
	startServer(t, "127.253.1.2:30002", "W2") // the member's address, another port
	startServer(t, "127.253.1.3:30009", "P")
	startServer(t, "127.253.1.3:30010", "N")
	startServer(t, "127.253.1.3:30011", "A")
	startServer(t, "127.253.1.3:30080", "L") // a local service on the wildcard's port
	fwd := startServer(t, "127.253.4.5:30005", "F")
	startUDPMember(t, "127.253.1.2:30001", "U")
	startUDPMember(t, "127.253.1.2:30003", "U2")
	// IPv6: fd00:253::/64 delivered locally, its ::2 the member's.
	for _, args := range [][]string{{"-6", "route", "add", "local", "fd00:253::/64", "dev", "lo"}, {"addr", "add", "fd00:253::2/128", "dev", "lo", "nodad"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	startServer(t, "[fd00:253::2]:30001", "V6")
	p, _ := loggedPlane(t)
	all := netip.MustParsePrefix("0.0.0.0/0")
	cfg := basic("0.0.0.0:0", "127.253.1.2:30001") // the wildcard on every port
	cfg.Virtuals["/Common/vs"].Network = all
	pool := func(name, member string) string {
		cfg.Pools[name] = &Pool{Name: name, LBMode: RoundRobin,
			Members: []Member{{Node: "/Common/" + ap(member).Addr().String(), Addr: ap(member)}}}
		return name
	}
	add := func(name, dst, network, pl string) *Virtual {
		v := &Virtual{Name: name, Destination: ap(dst), Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: pl, SNAT: SNAT{Type: SNATNone}}
		if network != "" {
			v.Network = netip.MustParsePrefix(network)
		}
		cfg.Virtuals[name] = v
		return v
	}
	add("/Common/host", "127.253.0.1:30080", "", "/Common/pool")
	add("/Common/w80", "0.0.0.0:30080", "0.0.0.0/0", pool("/Common/p80", "127.253.1.3:30009"))
	add("/Common/n24", "127.253.6.0:0", "127.253.6.0/24", pool("/Common/pn", "127.253.1.3:30010"))
	add("/Common/addr", "127.253.7.7:0", "", pool("/Common/pa", "127.253.1.3:30011"))
	add("/Common/udp", "0.0.0.0:0", "0.0.0.0/0", "/Common/pool").Protocol = ProtoUDP
	add("/Common/udp53", "0.0.0.0:30053", "0.0.0.0/0", pool("/Common/pu2", "127.253.1.2:30003")).Protocol = ProtoUDP
	add("/Common/fwd", "0.0.0.0:30005", "0.0.0.0/0", "").IPForward = true
	add("/Common/w6", "[::]:0", "::/0", pool("/Common/p6", "[fd00:253::2]:30001"))
	// Monitors' alias ports on a member's address: a port nothing
	// listens on is refused (the wildcard on every port does not take
	// the probe), a port a service listens on is that service's.
	for name, port := range map[string]uint16{"/Common/m_none": 30099, "/Common/m_svc": 30010} {
		cfg.Monitors[name] = &Monitor{Name: name, Type: MonitorTCP, Interval: 20 * time.Millisecond, Timeout: time.Second,
			Destination: netip.AddrPortFrom(netip.Addr{}, port)}
		pl := "/Common/p" + name[len("/Common/"):]
		pool(pl, "127.253.1.3:30011")
		cfg.Pools[pl].Monitor = MonitorRule{Names: []string{name}}
	}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	eventually(t, "the member probed on a port nothing listens on down", func() bool {
		return memberStat(t, p, "/Common/pm_none", "/Common/127.253.1.3:30011").MonitorStatus == "down"
	})
	eventually(t, "the member probed on a service's port up", func() bool {
		return memberStat(t, p, "/Common/pm_svc", "/Common/127.253.1.3:30011").MonitorStatus == "up"
	})
	for _, tc := range []struct{ dst, want string }{
		{"127.253.0.1:30080", "M1 Response"}, // the host virtual, its member on a local address
		{"127.253.7.7:30080", "A Response"},  // the address on every port
		{"127.253.6.1:30080", "N Response"},  // a longer network
		{"127.253.9.9:30080", "P Response"},  // the wildcard on the port
		{"127.253.1.3:30080", "P Response"},  // ... before the local service's own listener
		{"127.253.9.9:30081", "M1 Response"}, // the wildcard on every port
		{"127.253.6.1:30081", "N Response"},
		{"127.253.1.2:30002", "M1 Response"},   // the member's address, another port: the wildcard's
		{"127.253.1.2:30001", "M1 Response"},   // the member itself, not taken again
		{"127.253.4.5:30005", "F Response"},    // ip-forward on the port
		{"[fd00:253::9]:30003", "V6 Response"}, // the IPv6 wildcard on every port
		{"[fd00:253::2]:30001", "V6 Response"}, // its member
	} {
		if got, err := askOnce(tc.dst); got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if r := fwd.lastRemote(); r.Addr().String() != "127.253.4.5" {
		t.Errorf("forwarded from %v, want the address the client asked for", r)
	}
	if r := m1.lastRemote(); r.Addr().String() == "127.253.1.2" {
		t.Errorf("the member saw %v", r)
	}
	if got := dialUDP(t, "", "127.253.9.9:30054").mustAsk("u"); got != "U:u" {
		t.Errorf("udp to the wildcard on every port: %q", got)
	}
	if got := dialUDP(t, "", "127.253.9.9:30053").mustAsk("v"); got != "U2:v" {
		t.Errorf("udp to the wildcard on the port: %q", got)
	}
	// Each client connection once: none of the plane's connections to
	// its members came back to a wildcard.
	v, _ := p.Virtual("/Common/vs")
	if v.ClientSide.TotConns != 2 || v.Destination != "0.0.0.0:any" {
		t.Errorf("the wildcard on every port: %s, %d connections, want 2", v.Destination, v.ClientSide.TotConns)
	}
	if v, _ := p.Virtual("/Common/w80"); v.ClientSide.TotConns != 2 {
		t.Errorf("the wildcard on the port: %d connections, want 2", v.ClientSide.TotConns)
	}
	// Without them, nothing is steered.
	mustApply(t, p, basic("127.253.0.1:30080", "127.253.1.2:30001"))
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
	if got, _ := askOnce("127.253.1.3:30080"); got != "L Response" {
		t.Errorf("the local service after: %q", got)
	}
}
