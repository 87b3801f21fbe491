//go:build linux

package dataplane

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"golang.org/x/sys/unix"
)

// silentMember listens on addr, never accepts and fills its accept queue:
// Linux then drops every further SYN, so a connect to addr stays in
// progress until the connector gives up — a member that times out rather
// than refuses.
func silentMember(t *testing.T, addr string) {
	t.Helper()
	a := netip.MustParseAddrPort(addr)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().As4()}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel still completes connects to a full listen queue; no silent member")
	}
}

// The plain L4 path on the event loops: a connect that never completes is
// given up after the connect timeout (1 s in these tests) and the flow
// moves to the next member, as reselect-tries allows; with no try left
// the client is reset.
func TestLoopConnectTimeoutReselects(t *testing.T) {
	t.Parallel()
	p, _ := newPlane(t)
	silentMember(t, "127.0.78.2:9000")
	startServer(t, "127.0.78.3:9000", "S2")
	cfg := basic("127.0.78.1:9000", "127.0.78.2:9000", "127.0.78.3:9000")
	cfg.Pools["/Common/pool"].ReselectTries = 1
	mustApply(t, p, cfg)
	// Round robin: one of two connections tries the silent member first.
	var slowest time.Duration
	for i := 0; i < 2; i++ {
		start := time.Now()
		if got := once(t, "127.0.78.1:9000"); got != "S2 Response" {
			t.Fatalf("connection %d answered %q", i, got)
		}
		slowest = max(slowest, time.Since(start))
	}
	if slowest < 900*time.Millisecond {
		t.Fatalf("no connection waited for the connect timeout (slowest %v)", slowest)
	}

	// Without reselect tries, the connection that drew the silent member
	// is reset once the connect times out.
	cfg = basic("127.0.78.1:9000", "127.0.78.2:9000")
	mustApply(t, p, cfg)
	start := time.Now()
	if err := tryAsk("", "127.0.78.1:9000"); err == nil {
		t.Fatal("a flow whose only member never answers the connect was served")
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("the client was reset after %v, before the connect timeout", d)
	}
}

// The message-balanced path on the event loops: a message whose server
// connect never completes is sent to the other member after the connect
// timeout, and the client connection survives.
func TestMBLBLoopConnectTimeoutResends(t *testing.T) {
	t.Parallel()
	p, _ := newPlane(t)
	silentMember(t, "127.0.78.12:9000")
	startServer(t, "127.0.78.13:9000", "S2")
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}}
	mustApply(t, p, mblbConfig("127.0.78.11:9000", m, "127.0.78.12:9000", "127.0.78.13:9000"))
	c := dialVS(t, "127.0.78.11:9000")
	// Both members get a message in turn; each answer comes from S2, one
	// of them after the connect to the silent member timed out.
	var slowest time.Duration
	for i := 0; i < 4; i++ {
		start := time.Now()
		if got := c.mustAsk("hello"); got != "S2 Response" {
			t.Fatalf("message %d answered %q", i, got)
		}
		slowest = max(slowest, time.Since(start))
	}
	if slowest < 900*time.Millisecond {
		t.Fatalf("no message waited for the connect timeout (slowest %v)", slowest)
	}
	st, _ := p.MBLBStats("/Common/vs")
	if st.ServerFailures == 0 || st.Resets != 0 {
		t.Fatalf("engine stats after a timed-out connect: %+v", st)
	}
}
