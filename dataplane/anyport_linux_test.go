//go:build linux

package dataplane

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/internal/netnstest"
)

// inOwnNetns runs the calling test again in a network namespace of its own:
// the steering attaches to a whole namespace. It reports true in that run.
func inOwnNetns(t *testing.T) bool {
	t.Helper()
	return netnstest.Alone(t, "ANYPORT_NETNS")
}

// steerNetns runs the calling test again in a network namespace of its
// own, as inOwnNetns, and in that run skips, saying why, where the plane
// cannot steer every port (AnyPortSupport). It reports true in that run.
func steerNetns(t *testing.T) bool {
	t.Helper()
	if !inOwnNetns(t) {
		return false
	}
	if err := AnyPortSupport(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	return true
}

// TestAnyPort: a virtual on every port of 127.212.1.1 takes each port a
// client asks for and its member (at port any) gets the client's port; a
// virtual on one port of the same address still gets that port; an
// ip-forward virtual on every port of 127.212.1.3 sends each connection
// on to the listener the client asked for; without a virtual on every
// port, nothing is steered any more.
func TestAnyPort(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.212.1.2:30001", "P1")
	startServer(t, "127.212.1.2:30002", "P2")
	startServer(t, "127.212.1.2:30009", "P9")
	fwd := startServer(t, "127.212.1.3:30005", "F5")
	startServer(t, "127.212.1.3:30006", "F6")
	p, logs := loggedPlane(t)
	p.SetResetCauseLog(func(line string) { logs.Write([]byte(line + "\n")) })
	cfg := basic("127.212.1.1:0", "127.212.1.2:0")
	cfg.Virtuals["/Common/vs"].TranslatePort = false
	cfg.Virtuals["/Common/one"] = &Virtual{Name: "/Common/one", Destination: ap("127.212.1.1:30002"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/p9", SNAT: SNAT{Type: SNATNone}}
	cfg.Pools["/Common/p9"] = &Pool{Name: "/Common/p9", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.212.1.2", Addr: ap("127.212.1.2:30009")}}}
	cfg.Virtuals["/Common/fwd"] = &Virtual{Name: "/Common/fwd", Destination: ap("127.212.1.3:0"), Enabled: true,
		IPForward: true, SNAT: SNAT{Type: SNATNone}}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ dst, want string }{
		{"127.212.1.1:30001", "P1 Response"}, // every port, the member at the client's port
		{"127.212.1.1:30002", "P9 Response"}, // the port-specific virtual wins
		{"127.212.1.3:30005", "F5 Response"}, // forwarded where the client was going
		{"127.212.1.3:30006", "F6 Response"},
	} {
		if got, err := askOnce(tc.dst); got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if r := fwd.lastRemote(); r.Addr().String() != "127.212.1.3" {
		t.Errorf("forwarded from %v, want the virtual's own address", r)
	}
	// A port nobody listens on: the virtual takes the connection and
	// resets it when its member refuses.
	if err := tryAsk("", "127.212.1.1:30003"); err == nil {
		t.Error("port 30003 with no member there: answered")
	}
	for _, name := range []string{"/Common/vs", "/Common/fwd"} {
		if v, _ := p.Virtual(name); v.ClientSide.TotConns < 2 {
			t.Errorf("%s: %d client connections counted, want at least 2", name, v.ClientSide.TotConns)
		}
	}
	// Without the virtuals on every port, the ports are the host's again.
	cfg2 := basic("127.212.1.1:30002", "127.212.1.2:30009")
	mustApply(t, p, cfg2)
	d := net.Dialer{Timeout: 5 * time.Second}
	if c, err := d.Dial("tcp", "127.212.1.1:30001"); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("after the virtual on every port went: %v, want refused", err)
	}
	if got := once(t, "127.212.1.1:30002"); got != "P9 Response" {
		t.Errorf("the port-specific virtual alone: %q", got)
	}
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
}

// TestAnyPortUnsupported: what the plane refuses on every port, and why.
func TestAnyPortUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Virtual
		want string
	}{
		{"one port", Virtual{Destination: ap("127.212.2.1:80"), Protocol: ProtoUDP}, ""},
		{"range", Virtual{Destination: ap("127.212.2.1:0"), PortRanges: []PortRange{{Low: 1, High: 2}}, Protocol: ProtoUDP}, ""},
		{"tcp", Virtual{Destination: ap("127.212.2.1:0")}, ""},
		{"udp", Virtual{Destination: ap("127.212.2.1:0"), Protocol: ProtoUDP}, ""},
		{"udp ip-forward", Virtual{Destination: ap("127.212.2.1:0"), Protocol: ProtoUDP, IPForward: true}, ""},
		{"udp dns", Virtual{Destination: ap("127.212.2.1:0"), Protocol: ProtoUDP, DNS: &DNSProfile{}}, ""},
		{"mblb", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{}}, ""},
		{"http", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{}}}, ""},
		{"sip", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.SIP}}}, ""},
		{"iiop", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.IIOP}}}, ""},
		{"explicit proxy", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, ExplicitProxy: &fwdproxy.Config{}}}, ""},
		{"network on a port", Virtual{Destination: ap("127.212.2.0:80"), Network: netip.MustParsePrefix("127.212.2.0/24")}, ""},
		{"network on a port list", Virtual{Destination: ap("127.212.2.0:0"), Network: netip.MustParsePrefix("127.212.2.0/24"), PortRanges: []PortRange{{Low: 30000, High: 30255}}}, ""},
		{"network on too many ports", Virtual{Destination: ap("127.212.2.0:0"), Network: netip.MustParsePrefix("127.212.2.0/24"), PortRanges: []PortRange{{Low: 30000, High: 30256}}}, "at most 256"},
		{"ip-forward network on a port", Virtual{Destination: ap("127.212.2.0:80"), Network: netip.MustParsePrefix("127.212.2.0/24"), IPForward: true}, ""},
		{"ssl forward proxy", Virtual{Destination: ap("127.212.2.1:0"), MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, TLS: &TLS{Forward: &sslfwd.Proxy{}}}, "ssl forward proxy"},
		{"http3", Virtual{Destination: ap("127.212.2.1:0"), Protocol: ProtoUDP, HTTP3: &http3.Config{}}, "http3"},
		{"ip-forward on one port", Virtual{Destination: ap("127.212.2.1:80"), IPForward: true}, "its own listener"},
		{"ip-forward", Virtual{Destination: ap("127.212.2.1:0"), IPForward: true}, ""},
		{"ftp", Virtual{Destination: ap("127.212.2.1:0"), FTP: &ftpalg.Options{}}, ""},
		{"rtsp", Virtual{Destination: ap("127.212.2.1:0"), RTSP: &rtsp.Options{}}, ""},
		{"mptcp", Virtual{Destination: ap("127.212.2.1:0"), ClientTCP: &TCPSide{MPTCP: true}}, "Multipath TCP"},
	} {
		got := AnyPortUnsupported(&tc.v)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// askOnce is once without failing the test at once.
func askOnce(dst string) (string, error) {
	c, err := net.DialTimeout("tcp", dst, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	cl := &client{c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	return cl.ask("hello")
}

// TestAnyPortUDP: a UDP virtual on every port of 127.215.1.1 takes each
// port a client sends to and answers from that port; its member at port
// any gets the client's port; one client port sending to two ports makes
// two flows; a UDP virtual on one port of the address keeps that port, a
// TCP virtual on a port does not; a port another program holds is not
// answered (the flow could not answer from it); the ports are the host's
// again when the virtual goes.
func TestAnyPortUDP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startUDPMember(t, "127.215.1.2:30001", "P1")
	startUDPMember(t, "127.215.1.2:30004", "P4")
	startUDPMember(t, "127.215.1.2:30009", "P9")
	startServer(t, "127.215.1.2:30003", "T3")
	held, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.215.1.1:30006"))) // another program's, no SO_REUSEADDR
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	p, _ := loggedPlane(t)
	cfg := udpBasic("127.215.1.1:0", "127.215.1.2:0")
	cfg.Virtuals["/Common/vs"].TranslatePort = false
	cfg.Virtuals["/Common/one"] = &Virtual{Name: "/Common/one", Destination: ap("127.215.1.1:30002"), Enabled: true, Protocol: ProtoUDP,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/p9", SNAT: SNAT{Type: SNATNone}}
	cfg.Pools["/Common/p9"] = &Pool{Name: "/Common/p9", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.215.1.2", Addr: ap("127.215.1.2:30009")}}}
	cfg.Virtuals["/Common/tcp"] = &Virtual{Name: "/Common/tcp", Destination: ap("127.215.1.1:30001"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/p3", SNAT: SNAT{Type: SNATNone}}
	cfg.Pools["/Common/p3"] = &Pool{Name: "/Common/p3", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.215.1.2", Addr: ap("127.215.1.2:30003")}}}
	mustApply(t, p, cfg)
	// A connected client hears only from the port it sent to.
	if got := dialUDP(t, "", "127.215.1.1:30001").mustAsk("a"); got != "P1:a" {
		t.Errorf("port 30001: %q", got)
	}
	if got := dialUDP(t, "", "127.215.1.1:30002").mustAsk("b"); got != "P9:b" {
		t.Errorf("port 30002, the port-specific virtual's: %q", got)
	}
	if got := once(t, "127.215.1.1:30001"); got != "T3 Response" {
		t.Errorf("tcp on port 30001: %q", got)
	}
	// One client port to two ports: two flows, each answered from its port.
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.215.1.9:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]string{"127.215.1.1:30001": "P1:c", "127.215.1.1:30004": "P4:c"}
	for i := 0; i < 5 && len(want) > 0; i++ {
		for dst := range want {
			c.WriteToUDPAddrPort([]byte("c"), ap(dst))
		}
		buf := make([]byte, 512)
		for len(want) > 0 {
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			if want[from.String()] == string(buf[:n]) {
				delete(want, from.String())
			} else {
				t.Errorf("%q from %v", buf[:n], from)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("no answer from %v", want)
	}
	rows := map[string]bool{}
	p.Connections(ConnFilter{}, func(r *Connection) bool {
		if r.Virtual == "/Common/vs" && r.CSClient.Addr().String() == "127.215.1.9" {
			rows[r.CSServer.String()+" "+r.SSServer.String()] = true
		}
		return true
	})
	for _, row := range []string{"127.215.1.1:30001 127.215.1.2:30001", "127.215.1.1:30004 127.215.1.2:30004"} {
		if !rows[row] {
			t.Errorf("no flow %s in %v", row, rows)
		}
	}
	// A port another program holds: not answered, the datagram dropped.
	if got := dialUDP(t, "", "127.215.1.1:30006").ask("d"); got != "" {
		t.Errorf("port 30006, held: %q", got)
	}
	if v, _ := p.Virtual("/Common/vs"); v.ClientSide.TotConns < 3 {
		t.Errorf("%d flows counted, want at least 3", v.ClientSide.TotConns)
	}
	// Without the virtual on every port, the ports are the host's again:
	// nothing answers, the flows' own sockets are closed.
	cfg2 := udpBasic("127.215.1.1:30002", "127.215.1.2:30009")
	mustApply(t, p, cfg2)
	if got := dialUDP(t, "", "127.215.1.1:30001").ask("e"); got != "" {
		t.Errorf("after the virtual on every port went: %q", got)
	}
	if l, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.215.1.1:30004"))); err != nil {
		t.Errorf("a flow's socket outlived it: %v", err)
	} else {
		l.Close()
	}
	if got := dialUDP(t, "", "127.215.1.1:30002").mustAsk("f"); got != "P9:f" {
		t.Errorf("the port-specific virtual alone: %q", got)
	}
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
}

// TestAnyPortNetwork: a network virtual (127.215.6.0/24 on every port)
// takes every address and port of its network, its member at port any
// getting the client's port; an address on every port and a
// port-specific virtual inside it win (the most specific, as BIG-IP
// picks); a UDP network virtual takes the network's datagrams; an
// ip-forward network virtual sends each connection on to where the
// client was going; a destination with host bits, and a network on one
// port, are refused.
func TestAnyPortNetwork(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.215.7.2:30001", "N1")
	startServer(t, "127.215.7.2:30002", "N2")
	startServer(t, "127.215.7.2:30009", "P9")
	startServer(t, "127.215.8.5:30005", "F5")
	startUDPMember(t, "127.215.7.2:30001", "U1")
	p, _ := loggedPlane(t)
	net24 := netip.MustParsePrefix("127.215.6.0/24")
	cfg := basic("127.215.6.0:0", "127.215.7.2:0")
	cfg.Virtuals["/Common/vs"].TranslatePort = false
	cfg.Virtuals["/Common/vs"].Network = net24
	cfg.Pools["/Common/p9"] = &Pool{Name: "/Common/p9", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.215.7.2", Addr: ap("127.215.7.2:30009")}}}
	for name, dst := range map[string]string{"/Common/host": "127.215.6.7:0", "/Common/one": "127.215.6.8:30002"} {
		cfg.Virtuals[name] = &Virtual{Name: name, Destination: ap(dst), Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: "/Common/p9", SNAT: SNAT{Type: SNATNone}}
	}
	cfg.Virtuals["/Common/udp"] = &Virtual{Name: "/Common/udp", Destination: ap("127.215.6.0:0"), Network: net24, Enabled: true, Protocol: ProtoUDP,
		TranslateAddress: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	cfg.Virtuals["/Common/fwd"] = &Virtual{Name: "/Common/fwd", Destination: ap("127.215.8.0:0"), Network: netip.MustParsePrefix("127.215.8.0/24"),
		Enabled: true, IPForward: true, SNAT: SNAT{Type: SNATNone}}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ dst, want string }{
		{"127.215.6.1:30001", "N1 Response"}, // the network, the member at the client's port
		{"127.215.6.200:30002", "N2 Response"},
		{"127.215.6.7:30001", "P9 Response"}, // an address on every port wins
		{"127.215.6.8:30002", "P9 Response"}, // a port-specific virtual wins
		{"127.215.6.8:30001", "N1 Response"}, // the address's other ports are the network's
		{"127.215.8.5:30005", "F5 Response"}, // forwarded where the client was going
	} {
		if got, err := askOnce(tc.dst); got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if got := dialUDP(t, "", "127.215.6.3:30001").mustAsk("u"); got != "U1:u" {
		t.Errorf("udp to the network: %q", got)
	}
	if v, _ := p.Virtual("/Common/vs"); v.ClientSide.TotConns < 3 {
		t.Errorf("%d connections counted, want at least 3", v.ClientSide.TotConns)
	}
	if v, _ := p.Virtual("/Common/vs"); v.Destination != "127.215.6.0:any" {
		t.Errorf("show: destination %q", v.Destination)
	}
	// Refused: host bits in the destination (a network on one port is
	// served: TestAnyPortNetworkPort).
	bad := basic("127.215.6.1:0", "127.215.7.2:0")
	bad.Virtuals["/Common/vs"].Network = net24
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), "is not the address of its network") {
		t.Errorf("host bits: %v", err)
	}
	// Without the network virtuals, the network's ports are the host's again.
	mustApply(t, p, basic("127.215.6.8:30002", "127.215.7.2:30009"))
	d := net.Dialer{Timeout: 5 * time.Second}
	if c, err := d.Dial("tcp", "127.215.6.1:30001"); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("after the network virtual went: %v, want refused", err)
	}
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
}

// TestAnyPortDefault: a default forwarding virtual (`destination
// 0.0.0.0:any mask any ip-forward`) takes every connection of its
// namespace to an address of it and sends it on to where the client was
// going; a virtual on one port still wins. Only in a namespace of its
// own: in the host's it would take every local connection.
func TestAnyPortDefault(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	f5 := startServer(t, "127.215.13.5:30005", "F5")
	startServer(t, "127.215.14.1:30006", "F6")
	startServer(t, "127.215.13.2:30009", "P9")
	p, _ := loggedPlane(t)
	cfg := basic("127.215.13.9:30009", "127.215.13.2:30009")
	cfg.Virtuals["/Common/fwd"] = &Virtual{Name: "/Common/fwd", Destination: ap("0.0.0.0:0"), Network: netip.MustParsePrefix("0.0.0.0/0"),
		Enabled: true, IPForward: true, SNAT: SNAT{Type: SNATNone}}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ dst, want string }{
		{"127.215.13.5:30005", "F5 Response"},
		{"127.215.14.1:30006", "F6 Response"},
		{"127.215.13.9:30009", "P9 Response"}, // the virtual on one port wins
	} {
		if got, err := askOnce(tc.dst); got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if r := f5.lastRemote(); r.Addr().String() != "127.215.13.5" {
		t.Errorf("forwarded from %v, want the address the client asked for", r)
	}
	if v, _ := p.Virtual("/Common/fwd"); v.ClientSide.TotConns < 2 || v.Destination != "0.0.0.0:any" {
		t.Errorf("show: %s, %d connections", v.Destination, v.ClientSide.TotConns)
	}
	mustApply(t, p, basic("127.215.13.9:30009", "127.215.13.2:30009"))
	if p.steer != nil {
		t.Error("the steering program is still attached")
	}
}
