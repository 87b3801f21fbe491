//go:build linux

package dataplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/synhdr"
)

// synClient connects to vs as a client whose SYN says MSS mss, TTL ttl
// and ToS tos (set on its socket before the connect), sends one line and
// returns the answer.
func synClient(t *testing.T, vs string, mss, ttl, tos int) string {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			for _, o := range [][3]int{{unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss}, {unix.IPPROTO_IP, unix.IP_TTL, ttl}, {unix.IPPROTO_IP, unix.IP_TOS, tos}} {
				if e := unix.SetsockoptInt(int(fd), o[0], o[1], o[2]); e != nil && err == nil {
					err = e
				}
			}
		})
		return err
	}}
	c, err := d.DialContext(context.Background(), "tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	return string(buf[:n])
}

// synMember is a member whose listener keeps SYNs too: each connection's
// SYN (what the plane's member connect advertised) goes to the channel,
// and the member answers "S1 Response".
func synMember(t *testing.T, addr string) <-chan *synhdr.SYN {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = synhdr.SetSave(int(fd), true) })
		return err
	}}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *synhdr.SYN, 16)
	serveOn(t, ln, func(c net.Conn) {
		var s *synhdr.SYN
		rc, _ := c.(*net.TCPConn).SyscallConn()
		rc.Control(func(fd uintptr) { s = synhdr.Read(int(fd)) })
		select {
		case got <- s:
		default:
		}
		buf := make([]byte, 64)
		if _, err := c.Read(buf); err == nil {
			io.WriteString(c, "S1 Response")
		}
	})
	return got
}

// listenerSavesSYN reports whether the plane's listening socket on addr
// has TCP_SAVE_SYN set.
func listenerSavesSYN(t *testing.T, addr string) bool {
	t.Helper()
	want := ap(addr)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
			continue
		}
		if sa, err := unix.Getsockname(fd); err != nil || addrOf(sa) != want {
			continue
		}
		v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_SAVE_SYN)
		if err != nil {
			t.Fatal(err)
		}
		return v == 1
	}
	t.Fatalf("no listener on %s", addr)
	return false
}

// TestProxyMSS: with proxy-mss, the member connection's SYN advertises
// the MSS of the client's SYN, on the event loops and on goroutines;
// without, the route's (loopback's 65495), and the listener keeps no
// SYNs.
func TestProxyMSS(t *testing.T) {
	for i, path := range []string{"loop", "goroutine"} {
		t.Run(path, func(t *testing.T) {
			vs, member := fmt.Sprintf("127.69.1.%d:8080", 10+i), fmt.Sprintf("127.69.1.%d:9000", 20+i)
			syns := synMember(t, member)
			p, _ := newPlane(t)
			for _, c := range []struct {
				proxy     bool
				clientMSS int
				want      uint16
			}{
				{true, 1100, 1100},
				{true, 1380, 1380},
				{false, 1100, 65495},
				{true, 900, 900},
			} {
				cfg := basic(vs, member)
				v := cfg.Virtuals["/Common/vs"]
				tcpOptsPaths(t)[path](v)
				if c.proxy {
					v.ServerTCP = &TCPSide{ProxyMSS: true}
				}
				mustApply(t, p, cfg)
				if got := listenerSavesSYN(t, vs); got != c.proxy {
					t.Errorf("proxy-mss %v: listener TCP_SAVE_SYN %v", c.proxy, got)
				}
				if got := synClient(t, vs, c.clientMSS, 64, 0); got != "S1 Response" {
					t.Fatalf("answer %q", got)
				}
				select {
				case s := <-syns:
					if s == nil {
						t.Fatal("the member kept no SYN")
					}
					if s.MSS != c.want {
						t.Errorf("proxy-mss %v, client MSS %d: the member's SYN says MSS %d, want %d", c.proxy, c.clientMSS, s.MSS, c.want)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no connection reached the member")
				}
			}
		})
	}
}

// TestSYNRules: rules read the client's SYN as the client set it: its
// TTL, hops, ToS and the options tcp-options names, on an L4 virtual
// (goroutines) and a message-based one.
func TestSYNRules(t *testing.T) {
	for i, path := range []string{"goroutine", "mblb"} {
		t.Run(path, func(t *testing.T) {
			vs, member := fmt.Sprintf("127.69.2.%d:8080", 10+i), fmt.Sprintf("127.69.2.%d:9000", 20+i)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
				log local0. "ttl [IP::ttl] hops [IP::hops] tos [IP::tos] mss [TCP::option get 2] ts [string length [TCP::option get 8]] md5 <[TCP::option get 19]>"
				if { [catch { TCP::option get 4 } e] } { log local0. "sack: $e" }
			}`)
			lg.showOnFailure(t)
			cfg := basic(vs, member)
			v := cfg.Virtuals["/Common/vs"]
			tcpOptsPaths(t)[path](v)
			v.Rules = rs
			picks, err := synhdr.ParsePicks("{2 first} {8 last} {19 first}")
			if err != nil {
				t.Fatal(err)
			}
			v.ClientTCP = &TCPSide{TCPOptions: picks}
			mustApply(t, p, cfg)
			if !listenerSavesSYN(t, vs) {
				t.Fatal("the listener keeps no SYNs")
			}
			for _, c := range []struct{ mss, ttl, tos int }{{1200, 33, 0x20}, {1000, 120, 0xb8}} {
				if got := synClient(t, vs, c.mss, c.ttl, c.tos); strings.TrimSpace(got) != "S1 Response" {
					t.Fatalf("answer %q", got)
				}
				hops := 64 - c.ttl
				if c.ttl > 64 {
					hops = 128 - c.ttl
				}
				waitLog(t, lg, fmt.Sprintf("ttl %d hops %d tos %d mss %d ts 8 md5 <>", c.ttl, hops, c.tos, c.mss))
			}
			waitLog(t, lg, "sack: TCP::option get: option 4 is not configured for collection")
			// Without the tcp-options, the rule still reads the TTL: the
			// listener keeps SYNs for the rule alone.
			v.ClientTCP = nil
			rs2, lg2 := compileRules(t, `when CLIENT_ACCEPTED { log local0. "ttl [IP::ttl]" }`)
			v.Rules = rs2
			mustApply(t, p, cfg)
			if !listenerSavesSYN(t, vs) {
				t.Fatal("the listener keeps no SYNs for the rule")
			}
			synClient(t, vs, 1200, 77, 0)
			waitLog(t, lg2, "ttl 77")
			v.Rules = nil
			mustApply(t, p, cfg)
			if listenerSavesSYN(t, vs) {
				t.Error("the listener still keeps SYNs with nothing reading them")
			}
		})
	}
}

// waitLog waits (5 s at most) for a rule log line containing want.
func waitLog(t *testing.T, lg *ruleLog, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(lg.String(), want) {
			return
		}
	}
	t.Fatalf("no log line %q in:\n%s", want, lg)
}

// TestSYNTLSLoop: a client-ssl virtual whose rule handles CLIENT_ACCEPTED
// alone runs its flows on the event loops, which read the SYN before
// the handshake: the rule sees the client's TTL and the member's SYN
// advertises the client's MSS (proxy-mss).
func TestSYNTLSLoop(t *testing.T) {
	const vs, member = "127.69.5.1:443", "127.69.5.2:9000"
	cert, key, roots := testCert(t, "app.example")
	syns := synMember(t, member)
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	v := cfg.Virtuals["/Common/vs"]
	var lg *ruleLog
	v.Rules, lg = compileRules(t, `when CLIENT_ACCEPTED { log local0. "ttl [IP::ttl]" }`)
	lg.showOnFailure(t)
	v.TLS = clientSSL(t, cert, key)
	v.ServerTCP = &TCPSide{ProxyMSS: true}
	mustApply(t, p, cfg)
	d := &net.Dialer{Timeout: 3 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			if err = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, 1250); err == nil {
				err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TTL, 50)
			}
		})
		return err
	}}
	c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{RootCAs: roots, ServerName: "app.example"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "hello\n")
	buf := make([]byte, 64)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "S1 Response" {
		t.Fatalf("answer %q, %v", buf[:n], err)
	}
	waitLog(t, lg, "ttl 50")
	select {
	case s := <-syns:
		if s == nil || s.MSS != 1250 {
			t.Errorf("the member's SYN: %+v, want MSS 1250", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no connection reached the member")
	}
}
