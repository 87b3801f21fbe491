//go:build linux

package rules

import (
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// sockConn is a fake connection whose two sides are real loopback TCP
// sockets, so that the socket commands reach a kernel.
type sockConn struct {
	*fakeConn
	side [2]*net.TCPConn // client side, server side (nil: none)
}

func (c *sockConn) Socket(s Side, fn func(fd int) error) error {
	tc := c.side[0]
	if s == ServerSide {
		tc = c.side[1]
	}
	if tc == nil {
		return errors.New("the server side is not connected")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// tcpPair is a connected pair of loopback TCP sockets.
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	return tcpPairOn(t, "127.0.0.1:0")
}

// tcpPairOn is a connected pair of TCP sockets, the listening side on
// addr; an address the host lacks skips the test.
func tcpPairOn(t *testing.T, addr string) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("no %s on this host: %v", addr, err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	// Some bytes each way, so that the kernel has measured a round trip.
	for range 3 {
		a.Write([]byte("x"))
		b.Read(make([]byte, 1))
		b.Write([]byte("y"))
		a.Read(make([]byte, 1))
	}
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

func sockopt(t *testing.T, c *net.TCPConn, level, opt int) int {
	t.Helper()
	rc, _ := c.SyscallConn()
	var v int
	var err error
	rc.Control(func(fd uintptr) { v, err = unix.GetsockoptInt(int(fd), level, opt) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSocketCommands(t *testing.T) {
	client, _ := tcpPair(t)
	server, _ := tcpPair(t)
	run := func(body string, ev Event, c Conn) (*ConnState, error) {
		t.Helper()
		p := NewProgram(&Env{}, mustCompile(t, "sock", body))
		s := p.NewConnState(c)
		t.Cleanup(s.Release)
		return s, s.Run(ev)
	}
	conn := &sockConn{fakeConn: newFakeConn(), side: [2]*net.TCPConn{client, server}}

	s, err := run(`when CLIENT_ACCEPTED {
    set ::rtt [TCP::rtt]; set ::rttvar [TCP::rttvar]; set ::mss [TCP::mss]; set ::cwnd [TCP::snd_cwnd]; set ::rto [TCP::rto]
    set ::smss [TCP::mss serverside]
    IP::tos 184
    IP::tos serverside 40
    TCP::nagle enable
}`, ClientAccepted, conn)
	if err != nil {
		t.Fatal(err)
	}
	num := func(name string) int64 {
		v, _ := s.Var(name)
		var n int64
		for _, c := range v {
			if c < '0' || c > '9' {
				t.Fatalf("%s = %q, not a number", name, v)
			}
			n = n*10 + int64(c-'0')
		}
		return n
	}
	if num("mss") <= 0 || num("smss") <= 0 || num("cwnd") < num("mss") || num("rto") < 200 {
		t.Errorf("mss %d, server mss %d, cwnd %d, rto %d", num("mss"), num("smss"), num("cwnd"), num("rto"))
	}
	// TCP::rtt and TCP::rttvar must be whole numbers; their values are
	// the kernel's timing, which a test does not assert.
	_, _ = num("rtt"), num("rttvar")
	if got := sockopt(t, client, unix.IPPROTO_IP, unix.IP_TOS); got != 184 {
		t.Errorf("client ToS %d, want 184", got)
	}
	if got := sockopt(t, server, unix.IPPROTO_IP, unix.IP_TOS); got != 40 {
		t.Errorf("server ToS %d, want 40", got)
	}
	if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 0 {
		t.Errorf("TCP_NODELAY %d after TCP::nagle enable", got)
	}
	if _, err := run(`when CLIENT_ACCEPTED { TCP::nagle disable }`, ClientAccepted, conn); err != nil {
		t.Fatal(err)
	}
	if got := sockopt(t, client, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 1 {
		t.Errorf("TCP_NODELAY %d after TCP::nagle disable", got)
	}

	for _, c := range []struct {
		body string
		conn Conn
		err  string
	}{
		{`when CLIENT_ACCEPTED { TCP::rtt }`, newFakeConn(), "TCP::rtt: the connection has no TCP socket"},
		{`when CLIENT_ACCEPTED { TCP::mss serverside }`, &sockConn{fakeConn: newFakeConn(), side: [2]*net.TCPConn{client, nil}}, "TCP::mss: the server side is not connected"},
		{`when CLIENT_ACCEPTED { IP::tos 256 }`, conn, `"256" is not a ToS value from 0 to 255`},
		{`when CLIENT_ACCEPTED { IP::tos -1 }`, conn, `"-1" is not a ToS value`},
		{`when CLIENT_ACCEPTED { IP::tos sideways 8 }`, conn, "wrong # args"},
		{`when CLIENT_ACCEPTED { TCP::nagle on }`, conn, "wrong # args"},
		{`when CLIENT_ACCEPTED { TCP::rtt a b }`, conn, "wrong # args"},
	} {
		if _, err := run(c.body, ClientAccepted, c.conn); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.err)
		}
	}
}

// TestIPTosRead: reading a received packet's ToS is what openltm cannot
// do (it reads sockets); a rule that reads it is kept, not run, and says
// so, while one that only sets it runs.
func TestIPTosRead(t *testing.T) {
	for _, c := range []struct {
		body  string
		reads bool
	}{
		{`when CLIENT_ACCEPTED { if { [IP::tos] == 184 } { pool p } }`, true},
		{`when CLIENT_ACCEPTED { set t [IP::tos clientside] }`, true},
		{`when CLIENT_ACCEPTED { IP::tos 184 }`, false},
		{`when CLIENT_ACCEPTED { IP::tos serverside 184 }`, false},
		{`when CLIENT_ACCEPTED { IP::tos $v }`, false},
	} {
		r, err := Compile("tos", c.body)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if r.readsSYN != c.reads {
			t.Errorf("%s: reads the SYN %v, want %v", c.body, r.readsSYN, c.reads)
		}
	}
}
