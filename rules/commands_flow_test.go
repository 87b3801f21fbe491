//go:build linux

package rules

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// flowConn is a connection with sockets, an idle timer, a last-activity
// time and a tcp profile per side, for the FLOW:: and TCP:: settings.
type flowConn struct {
	*sockConn
	idle time.Duration
	last time.Time
	refs []ProfileRef
}

func (c *flowConn) FlowIdleTimeout() time.Duration     { return c.idle }
func (c *flowConn) SetFlowIdleTimeout(d time.Duration) { c.idle = d }
func (c *flowConn) FlowLastActive() time.Time          { return c.last }
func (c *flowConn) RefreshFlow()                       { c.last = time.Now() }
func (c *flowConn) VirtualProfiles() []ProfileRef      { return c.refs }

func newFlowConn(t *testing.T) (*flowConn, *net.TCPConn, *net.TCPConn) {
	t.Helper()
	client, _ := tcpPairOn(t, "127.107.0.1:0")
	server, _ := tcpPairOn(t, "127.107.0.1:0")
	tcp := func(ctx, nagle, high string) ProfileRef {
		return ProfileRef{Type: "tcp", Name: "/Common/tcp_" + ctx, Context: ctx, Attrs: map[string]string{
			"nagle": nagle, "dsack": "disabled", "ecn": "enabled", "rexmt-thresh": "3", "push-flag": "default",
			"pkt-loss-ignore-rate": "10", "pkt-loss-ignore-burst": "4", "proxy-buffer-high": high, "proxy-buffer-low": "32768",
			"abc": "enabled", "early-retransmit": "enabled", "enhanced-loss-recovery": "enabled", "limited-transmit": "enabled",
			"cmetrics-cache-timeout": "0", "auto-receive-window-size": "disabled",
		}}
	}
	c := &flowConn{
		sockConn: &sockConn{fakeConn: newFakeConn(), side: [2]*net.TCPConn{client, server}},
		idle:     300 * time.Second, last: time.Now().Add(-90 * time.Second),
		refs: []ProfileRef{tcp("clientside", "auto", "49152"), tcp("serverside", "disabled", "131072")},
	}
	return c, client, server
}

// runIn runs body in CLIENT_ACCEPTED on conn and returns the value of
// its last command.
func runIn(t *testing.T, conn Conn, body string) (string, error) {
	t.Helper()
	p := NewProgram(&Env{}, mustCompile(t, "flow", "when CLIENT_ACCEPTED {\nset ::r [eval {"+body+"}]\n}"))
	s := p.NewConnState(conn)
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		return "", err
	}
	v, _ := s.Var("r")
	return v, nil
}

func TestFlowCommands(t *testing.T) {
	conn, client, server := newFlowConn(t)
	for _, c := range []struct {
		name, body, want string
		check            func(t *testing.T)
	}{
		{name: "this", body: "FLOW::this", want: "clientside"},
		{name: "this serverside", body: "FLOW::this serverside", want: "serverside"},
		{name: "peer", body: "FLOW::peer [FLOW::this]", want: "serverside"},
		{name: "peer of peer", body: "FLOW::peer [FLOW::peer [FLOW::this]]", want: "clientside"},
		{name: "peer script", body: "peer { FLOW::this }", want: "serverside"},
		{name: "peer of the server side", body: "serverside { peer { FLOW::this } }", want: "clientside"},
		{name: "peer sets the other socket", body: "peer { TCP::naglemode enable }", check: func(t *testing.T) {
			if got := sockopt(t, server, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 0 {
				t.Errorf("server TCP_NODELAY %d after peer { TCP::naglemode enable } in a client event", got)
			}
		}},
		{name: "idle_timeout", body: "FLOW::idle_timeout", want: "300"},
		{name: "idle_timeout of a flow", body: "FLOW::idle_timeout [FLOW::this serverside]", want: "300"},
		{name: "idle_timeout set", body: "FLOW::idle_timeout 7; FLOW::idle_timeout", want: "7", check: func(t *testing.T) {
			if conn.idle != 7*time.Second {
				t.Errorf("idle timeout %v", conn.idle)
			}
		}},
		{name: "idle_timeout set through the peer", body: "FLOW::idle_timeout [FLOW::peer [FLOW::this]] 11", check: func(t *testing.T) {
			if conn.idle != 11*time.Second {
				t.Errorf("idle timeout %v, want the connection's 11s", conn.idle)
			}
		}},
		{name: "idle_timeout indefinite", body: "FLOW::idle_timeout indefinite; FLOW::idle_timeout", want: "0"},
		{name: "idle_duration", body: "FLOW::idle_duration", want: "90"},
		{name: "refresh", body: "FLOW::refresh [FLOW::this]; FLOW::idle_duration", want: "0"},
		{name: "priority set", body: "FLOW::priority 5; FLOW::priority", want: "5", check: func(t *testing.T) {
			if got := sockopt(t, client, unix.SOL_SOCKET, unix.SO_PRIORITY); got != 5 {
				t.Errorf("SO_PRIORITY %d", got)
			}
		}},
		{name: "priority of the server flow", body: "FLOW::priority serverside 3", check: func(t *testing.T) {
			if got := sockopt(t, server, unix.SOL_SOCKET, unix.SO_PRIORITY); got != 3 {
				t.Errorf("server SO_PRIORITY %d", got)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn.idle, conn.last = 300*time.Second, time.Now().Add(-90*time.Second)
			got, err := runIn(t, conn, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" && got != c.want {
				t.Errorf("%s = %q, want %q", c.body, got, c.want)
			}
			if c.check != nil {
				c.check(t)
			}
		})
	}

	// Bad input: a Tcl error, and nothing changed.
	for _, c := range []struct{ body, want string }{
		{"FLOW::peer", "wrong # args"},
		{"FLOW::peer nosuchflow", "not a flow of this connection"},
		{"FLOW::idle_timeout -1", "not a number of seconds"},
		{"FLOW::idle_timeout nosuchflow 5", "not a flow of this connection"},
		{"FLOW::idle_timeout clientside 5 6", "wrong # args"},
		{"FLOW::priority 8", "not a priority from 0 to 7"},
		{"FLOW::priority high", "not a priority"},
		{"FLOW::this upside", "wrong # args"},
	} {
		conn.idle = 300 * time.Second
		if _, err := runIn(t, conn, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
		if conn.idle != 300*time.Second {
			t.Errorf("%s changed the idle timeout to %v", c.body, conn.idle)
		}
	}

	// Without an idle timer or activity time (a connection that keeps
	// none), the commands say so.
	if _, err := runIn(t, newFakeConn(), "FLOW::idle_duration"); err == nil || !strings.Contains(err.Error(), "keep no activity time") {
		t.Errorf("FLOW::idle_duration on a fake connection: %v", err)
	}
}

func TestTCPSettingCommands(t *testing.T) {
	conn, client, server := newFlowConn(t)
	for _, c := range []struct {
		name, body, want string
		check            func(t *testing.T)
	}{
		{name: "dsack reads the profile", body: "TCP::dsack", want: "disabled"},
		{name: "rexmt_thresh", body: "TCP::rexmt_thresh", want: "3"},
		{name: "push_flag", body: "TCP::push_flag", want: "default"},
		{name: "lossfilter", body: "TCP::lossfilter", want: "10 4"},
		{name: "lossfilterburst", body: "TCP::lossfilterburst", want: "4"},
		{name: "naglemode enable", body: "TCP::naglemode enable; TCP::naglemode", want: "enable", check: func(t *testing.T) {
			if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 0 {
				t.Errorf("TCP_NODELAY %d after naglemode enable", got)
			}
		}},
		{name: "naglemode auto", body: "TCP::naglemode auto; TCP::naglemode", want: "auto", check: func(t *testing.T) {
			if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 1 {
				t.Errorf("TCP_NODELAY %d after naglemode auto", got)
			}
		}},
		{name: "naglemode disable serverside", body: "serverside { TCP::naglemode disable; TCP::naglemode }", want: "disable", check: func(t *testing.T) {
			if got := sockopt(t, server, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 1 {
				t.Errorf("server TCP_NODELAY %d", got)
			}
		}},
		{name: "proxybufferhigh from the profile", body: "serverside { TCP::proxybufferhigh }", want: "131072"},
		{name: "proxybufferhigh set", body: "TCP::proxybufferhigh 20000; TCP::proxybufferhigh", want: "20000", check: func(t *testing.T) {
			if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT); got != 20000 {
				t.Errorf("TCP_NOTSENT_LOWAT %d", got)
			}
		}},
		{name: "proxybufferlow", body: "TCP::proxybufferlow", want: "32768"},
		{name: "proxybuffer: nothing waits unsent", body: "TCP::proxybuffer", want: "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := runIn(t, conn, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s = %q, want %q", c.body, got, c.want)
			}
			if c.check != nil {
				c.check(t)
			}
		})
	}
	// A value computed at run time (one written in the rule keeps it from
	// running: TestTCPOptUnsupportedForms).
	for _, c := range []struct{ body, want string }{
		{"set v enable; TCP::dsack $v", "net.ipv4.tcp_dsack"},
		{"set v disable; TCP::ecn $v", "cannot be changed per connection"},
		{"set v 10; TCP::lossfilter $v 4", "no loss filter"},
		{"TCP::naglemode sometimes", "not enable, disable or auto"},
		{"TCP::proxybufferhigh 0", "not a size in bytes"},
		{"TCP::proxybufferhigh a b", "wrong # args"},
	} {
		if _, err := runIn(t, conn, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
	if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT); got != 20000 {
		t.Errorf("a refused TCP::proxybufferhigh changed TCP_NOTSENT_LOWAT to %d", got)
	}
	// A virtual without a tcp profile.
	conn.refs = nil
	if _, err := runIn(t, conn, "TCP::dsack"); err == nil || !strings.Contains(err.Error(), "no tcp profile") {
		t.Errorf("TCP::dsack without a profile: %v", err)
	}
}

// udpConn is a UDP flow between addresses of this test's range.
type udpConn struct{ *fakeConn }

func (udpConn) Protocol() int { return protoUDP }

func TestUDPSettingCommands(t *testing.T) {
	f := newFakeConn()
	f.addrs = [4]netip.AddrPort{
		netip.MustParseAddrPort("127.107.0.9:40001"), netip.MustParseAddrPort("127.107.0.43:53"),
		netip.MustParseAddrPort("127.107.0.43:40001"), netip.MustParseAddrPort("127.107.0.34:53"),
	}
	conn := udpConn{f}
	raw, err := os.ReadFile("/sys/class/net/lo/mtu")
	if err != nil {
		t.Skipf("no loopback MTU to compare with: %v", err)
	}
	mtu, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	// Linux caps a route's MTU at 65535 (IP_MAX_MTU).
	if got, err := runIn(t, conn, "UDP::mss"); err != nil || got != strconv.Itoa(min(mtu, 65535)-28) {
		t.Errorf("UDP::mss = %q, %v; want the loopback's MTU %d less 28", got, err, mtu)
	}
	got, err := runIn(t, conn, "UDP::unused_port 127.107.0.34 53 127.107.0.43 41000")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(got)
	if p < 41000 || p > 41000+unusedPortTries {
		t.Fatalf("UDP::unused_port = %q", got)
	}
	// The port is free for UDP: hold it, and the command moves past it.
	held, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.107.0.43"), uint16(p))))
	if err != nil {
		t.Fatalf("the port UDP::unused_port gave cannot be bound: %v", err)
	}
	defer held.Close()
	again, err := runIn(t, conn, "UDP::unused_port 127.107.0.34 53 127.107.0.43 "+got)
	if err != nil || again == got {
		t.Errorf("with %s held, UDP::unused_port = %q, %v", got, again, err)
	}
	for _, c := range []struct{ body, want string }{
		{"UDP::mss sideways", "wrong # args"},
		{"UDP::sendbuffer", "no socket of its own"},
		{"UDP::unused_port 127.107.0.34 53 ::1", "not of one address family"},
	} {
		if _, err := runIn(t, conn, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
	if _, err := runIn(t, newFakeConn(), "UDP::mss"); err == nil || !strings.Contains(err.Error(), "not UDP") {
		t.Errorf("UDP::mss on TCP: %v", err)
	}
}

func TestSmallGlobals(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		// RFC 1320's test vector.
		{"binary encode hex [md4 abc]", "a448017aaf21d8525fc10ae87aa6729d"},
		{"binary encode hex [md4 {}]", "31d6cfe0d16ae931b73c59d7e0c089c0"},
		// 32-bit FNV-1a of "abc".
		{"fasthash abc", "440920331"},
		{"expr {[fasthash key1] == [fasthash key1]}", "1"},
		{"sharedvar a b; set a 1", "1"},
	} {
		got, err := runIn(t, newFakeConn(), c.body)
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s = %q, want %q", c.body, got, c.want)
		}
	}
	// sharedvar in a proc reaches the connection's variable, which the
	// other rule of the connection reads.
	p := NewProgram(&Env{},
		mustCompile(t, "counter", `proc bump {} { sharedvar hits; incr hits }
when CLIENT_ACCEPTED { set hits 1; call bump; call bump }`),
		mustCompile(t, "reader", `when CLIENT_ACCEPTED priority 900 { set ::seen $hits }`))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Var("seen"); v != "3" {
		t.Errorf("the second rule sees hits = %q, want 3", v)
	}
	for _, body := range []string{"md4", "fasthash a b", "sharedvar"} {
		if _, err := runIn(t, newFakeConn(), body); err == nil || !strings.Contains(err.Error(), "wrong # args") {
			t.Errorf("%s: %v", body, err)
		}
	}
}
