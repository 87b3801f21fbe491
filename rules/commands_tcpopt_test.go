//go:build linux

package rules

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair248 is a connected pair of loopback TCP sockets on 127.0.248.1,
// with a few bytes exchanged so that the kernel has a round trip.
func pair248(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	return tcpPairOn(t, "127.0.248.1:0")
}

func sockStr(t *testing.T, c *net.TCPConn, level, opt int) string {
	t.Helper()
	rc, _ := c.SyscallConn()
	var v string
	var err error
	rc.Control(func(fd uintptr) { v, err = unix.GetsockoptString(int(fd), level, opt) })
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(v, "\x00")
}

func sockU64(t *testing.T, c *net.TCPConn, level, opt int) uint64 {
	t.Helper()
	rc, _ := c.SyscallConn()
	var v uint64
	var err error
	rc.Control(func(fd uintptr) { v, err = getsockoptUint64(int(fd), level, opt) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// optConn is a socket connection that also has an idle timer and knows
// its virtual server, for TCP::idletime and FLOWTABLE::.
type optConn struct {
	*sockConn
	idle time.Duration
}

func (c *optConn) FlowIdleTimeout() time.Duration     { return c.idle }
func (c *optConn) SetFlowIdleTimeout(d time.Duration) { c.idle = d }
func (c *optConn) VirtualName() string                { return "/Common/vs_web" }
func (c *optConn) LBMode(string) (string, error)      { return "round-robin", nil }
func (c *optConn) Members(string) ([]netip.AddrPort, error) {
	return nil, nil
}
func (c *optConn) MemberInfo(string, netip.AddrPort) (MemberInfo, error) {
	return MemberInfo{}, errors.New("none")
}

type fakeFlows struct{}

func (fakeFlows) Flows() int { return 42 }
func (fakeFlows) VirtualFlows(name string) (int, int, bool) {
	switch name {
	case "/Common/vs_web":
		return 7, 100, true
	case "/Common/other":
		return 3, 0, true
	}
	return 0, 0, false
}

func TestTCPOptCommands(t *testing.T) {
	client, _ := pair248(t)
	server, _ := pair248(t)
	conn := &optConn{sockConn: &sockConn{fakeConn: newFakeConn(), side: [2]*net.TCPConn{client, server}}}
	run := func(t *testing.T, body string) (*ConnState, error) {
		t.Helper()
		p := NewProgram(&Env{FlowTable: fakeFlows{}}, mustCompile(t, "opt", "when CLIENT_ACCEPTED {\n"+body+"\n}"))
		s := p.NewConnState(conn)
		t.Cleanup(s.Release)
		return s, s.Run(ClientAccepted)
	}
	get := func(t *testing.T, body string) string {
		t.Helper()
		s, err := run(t, "set ::r ["+body+"]")
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		v, _ := s.Var("r")
		return v
	}
	num := func(t *testing.T, body string) int64 {
		t.Helper()
		v := get(t, body)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s = %q, not a number", body, v)
		}
		return n
	}

	// Setters: each one's effect read back from the socket itself.
	for _, c := range []struct {
		name, body string
		check      func(t *testing.T)
	}{
		{"keepalive", "TCP::keepalive 75", func(t *testing.T) {
			if sockopt(t, client, unix.SOL_SOCKET, unix.SO_KEEPALIVE) != 1 || sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE) != 75 ||
				sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL) != 75 {
				t.Error("keep-alive not set to 75 s")
			}
			if got := num(t, "TCP::keepalive"); got != 75 {
				t.Errorf("TCP::keepalive = %d", got)
			}
		}},
		{"keepalive off", "TCP::keepalive 0", func(t *testing.T) {
			if sockopt(t, client, unix.SOL_SOCKET, unix.SO_KEEPALIVE) != 0 || num(t, "TCP::keepalive") != 0 {
				t.Error("keep-alive still on")
			}
		}},
		{"keepalive serverside", "serverside { TCP::keepalive 30 }", func(t *testing.T) {
			if sockopt(t, server, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE) != 30 {
				t.Error("server side keep-alive not 30")
			}
		}},
		{"congestion reno", "TCP::congestion newreno", func(t *testing.T) {
			if got := sockStr(t, client, unix.IPPROTO_TCP, unix.TCP_CONGESTION); got != "reno" {
				t.Errorf("TCP_CONGESTION %q", got)
			}
			if got := get(t, "TCP::congestion"); got != "reno" {
				t.Errorf("TCP::congestion = %q", got)
			}
		}},
		{"delayed_ack disable", "TCP::delayed_ack disable", func(t *testing.T) {
			if sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_QUICKACK) != 1 {
				t.Error("TCP_QUICKACK not set")
			}
		}},
		{"delayed_ack enable", "TCP::delayed_ack enable", func(t *testing.T) {
			if sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_QUICKACK) != 0 {
				t.Error("TCP_QUICKACK still set")
			}
		}},
		{"sendbuf", "TCP::sendbuf 100000", func(t *testing.T) {
			if got := sockopt(t, client, unix.SOL_SOCKET, unix.SO_SNDBUF); got != 200000 {
				t.Errorf("SO_SNDBUF %d, want 200000 (Linux doubles it)", got)
			}
			if got := num(t, "TCP::sendbuf"); got != 100000 {
				t.Errorf("TCP::sendbuf = %d", got)
			}
		}},
		{"recvwnd", "TCP::recvwnd 65536", func(t *testing.T) {
			if got := sockopt(t, client, unix.SOL_SOCKET, unix.SO_RCVBUF); got != 131072 {
				t.Errorf("SO_RCVBUF %d, want 131072", got)
			}
			if got := num(t, "TCP::recvwnd"); got != 65536 {
				t.Errorf("TCP::recvwnd = %d", got)
			}
		}},
		{"pacing", "TCP::pacing enable", func(t *testing.T) {
			if got := sockU64(t, client, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE); got == noPacingCap {
				t.Error("SO_MAX_PACING_RATE still unlimited: pacing not asked for")
			}
			// The server side is paced only by its congestion control
			// (bbr paces; it is some hosts' default).
			want := "0"
			if sockStr(t, server, unix.IPPROTO_TCP, unix.TCP_CONGESTION) == "bbr" {
				want = "1"
			}
			if a, b := get(t, "TCP::pacing"), get(t, "serverside { TCP::pacing }"); a != "1" || b != want {
				t.Errorf("TCP::pacing reads %s on the client side, %s on the server side (want 1, %s)", a, b, want)
			}
		}},
		{"nagle", "TCP::nagle enable", func(t *testing.T) {
			if got := get(t, "TCP::naglestate"); got != "enabled" {
				t.Errorf("TCP::naglestate = %q after TCP::nagle enable", got)
			}
			if got := get(t, "TCP::naglestate serverside"); got != "disabled" {
				t.Errorf("server side naglestate %q (Go sets TCP_NODELAY)", got)
			}
		}},
		{"idletime", "TCP::idletime 600", func(t *testing.T) {
			if conn.idle != 600*time.Second {
				t.Errorf("idle timeout %v", conn.idle)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := run(t, c.body); err != nil {
				t.Fatal(err)
			}
			c.check(t)
		})
	}

	t.Run("readings", func(t *testing.T) {
		mss := num(t, "TCP::mss")
		if got := num(t, "TCP::snd_wnd"); got <= 0 {
			t.Errorf("TCP::snd_wnd = %d", got)
		}
		if got := num(t, "TCP::snd_ssthresh"); got < mss || got > f5InitialSsthresh {
			t.Errorf("TCP::snd_ssthresh = %d", got)
		}
		// Loopback connections negotiate window scaling (Linux's
		// default); both ends advertise the same scale.
		rs, ss := num(t, "TCP::rcv_scale"), num(t, "TCP::snd_scale serverside")
		if rs < 0 || rs > 14 || ss < 0 || ss > 14 {
			t.Errorf("scales %d %d", rs, ss)
		}
		if got := num(t, "TCP::rcv_size"); got <= 0 {
			t.Errorf("TCP::rcv_size = %d", got)
		}
		if got := num(t, "TCP::bandwidth"); got < 0 {
			t.Errorf("TCP::bandwidth = %d", got)
		}
	})

	t.Run("unused_port", func(t *testing.T) {
		held, err := net.Listen("tcp", "127.0.248.2:0")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		hp := held.Addr().(*net.TCPAddr).Port
		if hp == 65535 {
			t.Skip("the kernel gave the last port")
		}
		got := num(t, "TCP::unused_port 127.0.248.9 80 127.0.248.2 "+strconv.Itoa(hp))
		if got <= int64(hp) || got > int64(hp)+unusedPortTries {
			t.Errorf("TCP::unused_port from held port %d = %d", hp, got)
		}
		if got := num(t, "TCP::unused_port 127.0.248.9 80 127.0.248.2"); got <= 0 {
			t.Errorf("TCP::unused_port without hint = %d", got)
		}
	})

	t.Run("byte order and uptime", func(t *testing.T) {
		for body, want := range map[string]string{
			"htonl 12345678": "1315027968", "ntohl 1315027968": "12345678", "htonl 1": "16777216",
			"htons 1234": "53764", "ntohs 53764": "1234", "htons 65535": "65535", "htonl 4294967295": "4294967295",
		} {
			if got := get(t, body); got != want {
				t.Errorf("%s = %s, want %s", body, got, want)
			}
		}
		if num(t, "uptime") <= 0 {
			t.Error("uptime not positive")
		}
	})

	t.Run("flowtable", func(t *testing.T) {
		for body, want := range map[string]string{
			"FLOWTABLE::count": "42", "FLOWTABLE::count virtual": "7", "FLOWTABLE::count virtual other": "3",
			"FLOWTABLE::limit virtual": "100", "FLOWTABLE::limit virtual /Common/other": "0",
		} {
			if got := get(t, body); got != want {
				t.Errorf("%s = %s, want %s", body, got, want)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct{ body, err string }{
			{"TCP::keepalive 1 2", "wrong # args"},
			{"TCP::keepalive 40000", "from 0 to 32767"},
			{"TCP::keepalive -1", "from 0 to 32767"},
			{"TCP::idletime", "wrong # args"},
			{"TCP::idletime x", "is not a number of seconds"},
			{"TCP::congestion woodside", "no Linux equivalent"},
			{"TCP::congestion fastest", "unknown algorithm"},
			{"TCP::congestion a b", "wrong # args"},
			{"TCP::delayed_ack", "wrong # args"},
			{"TCP::delayed_ack sometimes", "neither enable nor disable"},
			{"TCP::sendbuf 0", "not a size"},
			{"TCP::recvwnd 1 2", "wrong # args"},
			{"TCP::snd_wnd sideways", "wrong # args"},
			{"TCP::naglestate a b", "wrong # args"},
			{"TCP::pacing maybe", "neither enable nor disable"},
			{"TCP::pacing disable", "cannot stop pacing"},
			{"TCP::unused_port 1.2.3.4 80", "wrong # args"},
			{"TCP::unused_port 1.2.3.4 80 ::1", "not of one address family"},
			{"TCP::unused_port 1.2.3.4 99999 127.0.0.1", "is not a port"},
			{"TCP::unused_port nowhere 80 127.0.0.1", "is not an IP address"},
			{"htonl", "wrong # args"},
			{"ntohs x", "expected integer"},
			{"uptime now", "wrong # args"},
			{"FLOWTABLE::count virtual a b", "wrong # args"},
			{"FLOWTABLE::limit", "wrong # args"},
			{"FLOWTABLE::count pool", "wrong # args"},
			{"FLOWTABLE::count virtual nosuch", "no virtual server /Common/nosuch"},
		} {
			if _, err := run(t, c.body); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.body, err, c.err)
			}
		}
		noSock := &optConn{sockConn: &sockConn{fakeConn: newFakeConn()}}
		p := NewProgram(&Env{}, mustCompile(t, "opt", "when CLIENT_ACCEPTED { FLOWTABLE::count }"))
		s := p.NewConnState(noSock)
		defer s.Release()
		if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "not available") {
			t.Errorf("FLOWTABLE::count without a table: %v", err)
		}
	})
}

// TestTCPOptUnsupportedForms: the forms Linux or openltm cannot carry out
// keep the rule from running, and say which.
func TestTCPOptUnsupportedForms(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"when CLIENT_ACCEPTED { TCP::sendbuf auto }", "TCP::sendbuf auto"},
		{"when CLIENT_ACCEPTED { TCP::recvwnd auto }", "TCP::recvwnd auto"},
		{"when CLIENT_ACCEPTED { log local0. [FLOWTABLE::count route_domain] }", "FLOWTABLE::count route_domain"},
		{"when CLIENT_ACCEPTED { FLOWTABLE::limit route_domain 0 }", "FLOWTABLE::limit route_domain"},
		{"when SERVER_CONNECTED { TCP::option set 28 [binary format I 1] all }", "TCP::option set (Linux cannot add or strip the options of the segments it sends)"},
		{"when SERVER_CONNECTED { TCP::option noset 28 }", "TCP::option noset (Linux cannot add or strip the options of the segments it sends)"},
		{"when CLIENT_ACCEPTED { TCP::abc disable }", "TCP::abc disable"},
		{"when CLIENT_ACCEPTED { TCP::lossfilter 10 4 }", "TCP::lossfilter 10"},
		{"when SERVER_CONNECTED { TCP::setmss 1400 }", "TCP::setmss (Linux fixes a connection's MSS in its handshake)"},
	} {
		r, err := Compile("u", c.body)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil {
			t.Errorf("%s: err %v, want an UnsupportedError", c.body, err)
			continue
		}
		if u := r.Unsupported(); len(u) != 1 || u[0] != c.want {
			t.Errorf("%s: unsupported %q, want %q", c.body, u, c.want)
		}
	}
	for _, body := range []string{
		"when CLIENT_ACCEPTED { TCP::sendbuf 65536; TCP::recvwnd $::w; FLOWTABLE::count virtual }",
		"when SERVER_CONNECTED { clientside { TCP::congestion cubic }; TCP::keepalive 60 }",
		"when CLIENT_ACCEPTED { log local0. \"[TCP::option get 28] [IP::ttl] [IP::hops] [IP::tos]\" }",
		"when CLIENT_ACCEPTED { log local0. \"[TCP::abc] [TCP::dsack] [TCP::lossfilter]\" }",
	} {
		if _, err := Compile("ok", body); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
