//go:build linux

package dataplane

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// outcome reads c to its end: what came, then how it ended (FIN, RST,
// or "open" when nothing ended it within the bound).
func outcome(c net.Conn, bound time.Duration) string {
	c.SetReadDeadline(time.Now().Add(bound))
	var buf bytes.Buffer
	b := make([]byte, 4096)
	for i := 0; i < 10000; i++ {
		n, err := c.Read(b)
		buf.Write(b[:n])
		switch {
		case err == nil:
			continue
		case err == io.EOF:
			return buf.String() + "|FIN"
		case errors.Is(err, syscall.ECONNRESET):
			return buf.String() + "|RST"
		case errors.Is(err, os.ErrDeadlineExceeded):
			return buf.String() + "|open"
		default:
			return buf.String() + "|" + err.Error()
		}
	}
	return buf.String() + "|endless"
}

// closeMember serves one connection at a time on addr with serve, and
// reports what serve saw.
func closeMember(t *testing.T, addr string, serve func(c *net.TCPConn) string) <-chan string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	seen := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				seen <- serve(c.(*net.TCPConn))
			}()
		}
	}()
	return seen
}

// Members of the close tests.
var (
	// replyAfterEOF reads to the client's FIN, answers how much came,
	// and closes.
	replyAfterEOF = func(c *net.TCPConn) string {
		b, err := io.ReadAll(io.LimitReader(c, 1<<20))
		if err != nil {
			return "read: " + err.Error()
		}
		c.Write([]byte("got " + strconv.Itoa(len(b))))
		return "EOF"
	}
	// holdAfterEOF reads to the client's FIN and keeps its side open.
	// It reports "|RST" once a reset has closed its socket.
	holdAfterEOF = func(c *net.TCPConn) string {
		io.Copy(io.Discard, io.LimitReader(c, 1<<20))
		rc, _ := c.SyscallConn()
		for i := 0; i < 200; i++ {
			var st uint8
			rc.Control(func(fd uintptr) {
				if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
					st = ti.State
				}
			})
			if st == 7 { // TCP_CLOSE: the peer's reset
				return "|RST"
			}
			time.Sleep(50 * time.Millisecond)
		}
		return "|open"
	}
	// sayAndHalfClose says hi, sends its FIN and waits for the end of
	// the other way.
	sayAndHalfClose = func(c *net.TCPConn) string {
		c.Write([]byte("hi"))
		c.CloseWrite()
		return outcome(c, 3*time.Second) // open: not ended in a few of the timers' periods
	}
)

// TestTCPCloseHandling: loose-close, reset-on-client-fin, the close,
// FIN-WAIT and zero-window timers and time-wait 0, as a real client and
// member see the flow end (a FIN or a RST), on the event loops and on
// goroutine flows (a stream profile's, a rule's); the defaults keep the
// half-close.
func TestTCPCloseHandling(t *testing.T) {
	// sendFIN writes hello and half-closes; bulk writes more than the
	// member's window without closing; bulkFIN the same, then its FIN.
	sendFIN := func(c *net.TCPConn) { c.Write([]byte("hello")); c.CloseWrite() }
	bulk := func(c *net.TCPConn) { go c.Write(make([]byte, 200<<10)) }
	bulkFIN := func(c *net.TCPConn) {
		go func() {
			if _, err := c.Write(make([]byte, 200<<10)); err == nil {
				c.CloseWrite()
			}
		}()
	}
	nothing := func(c *net.TCPConn) {}
	bigSend := &TCPSide{SendBuffer: 1 << 20}
	cases := []struct {
		name   string
		close  *TCPClose
		server *TCPSide
		serve  func(c *net.TCPConn) string // nil: readNothing
		client func(c *net.TCPConn)
		// want is how the client sees the end; member, when set, how the
		// member does.
		want, member string
		// closeClient: the client closes once it has seen its end, before
		// the member's is read.
		closeClient bool
		// memberRules, when set, is how the member sees the end on a
		// rule's flow, which passes every half-close on with a FIN.
		memberRules string
	}{
		{name: "defaults half-close", serve: replyAfterEOF, client: sendFIN, want: "got 5|FIN", member: "EOF"},
		{name: "loose-close client FIN", close: &TCPClose{Loose: true}, serve: replyAfterEOF, client: sendFIN, want: "|FIN", member: "EOF"},
		{name: "loose-close member FIN", close: &TCPClose{Loose: true}, serve: sayAndHalfClose, client: nothing, want: "hi|FIN", member: "|FIN"},
		{name: "defaults member FIN", serve: sayAndHalfClose, client: nothing, want: "hi|FIN", member: "|open"},
		{name: "reset-on-client-fin", close: &TCPClose{ResetOnClientFIN: true}, serve: replyAfterEOF, client: sendFIN, want: "|RST"},
		{name: "reset-on-client-fin member FIN", close: &TCPClose{ResetOnClientFIN: true}, serve: sayAndHalfClose, client: nothing, want: "hi|FIN", member: "|open"},
		{name: "close timeout", close: &TCPClose{AfterFIN: time.Second}, serve: sayAndHalfClose, client: nothing, want: "hi|FIN", member: "|RST"},
		{name: "close timeout client FIN", close: &TCPClose{AfterFIN: time.Second}, serve: holdAfterEOF, client: sendFIN, want: "|RST", member: "|RST"},
		{name: "time-wait 0", server: &TCPSide{NoLinger: true}, serve: sayAndHalfClose, client: nothing, want: "hi|FIN", closeClient: true, member: "|RST", memberRules: "|FIN"},
		{name: "time-wait default", serve: sayAndHalfClose, client: nothing, want: "hi|FIN", closeClient: true, member: "|FIN"},
		{name: "fin-wait", close: &TCPClose{FinWait: time.Second}, server: bigSend, client: bulkFIN, want: "|RST"},
		{name: "fin-wait not stuck", close: &TCPClose{FinWait: time.Second}, serve: replyAfterEOF, client: sendFIN, want: "got 5|FIN", member: "EOF"},
		{name: "zero-window", close: &TCPClose{ZeroWindow: time.Second}, server: bigSend, client: bulk, want: "|RST"},
		{name: "no zero-window bound", server: bigSend, client: bulk, want: "|open"},
	}
	paths := tcpOptsPaths(t)
	paths["rules"] = func(v *Virtual) { v.Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { set seen 1 }") }
	for i, tc := range cases {
		for _, pname := range []string{"loop", "goroutine", "rules"} {
			nets := map[string][2]string{"loop": {"1", "2"}, "goroutine": {"12", "13"}, "rules": {"14", "15"}}[pname]
			vsAddr := "127.14." + nets[0] + "." + strconv.Itoa(i+1) + ":8000"
			member := "127.14." + nets[1] + "." + strconv.Itoa(i+1) + ":9000"
			path := paths[pname]
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				serve := tc.serve
				if serve == nil {
					// Hold the connection without reading until the test
					// ends: the member's window closes.
					done := make(chan struct{})
					t.Cleanup(func() { close(done) })
					serve = func(c *net.TCPConn) string { <-done; return "held" }
				}
				seen := closeMember(t, member, serve)
				p, _ := newPlane(t)
				cfg := basic(vsAddr, member)
				v := cfg.Virtuals["/Common/vs"]
				v.TCPClose, v.ServerTCP = tc.close, tc.server
				path(v)
				mustApply(t, p, cfg)
				c := dialVS(t, vsAddr)
				tc.client(c.c)
				bound := 8 * time.Second
				if tc.want[len(tc.want)-4:] == "open" {
					bound = 3 * time.Second // what must not end: a few of the timers' periods
				}
				if got := outcome(c.c, bound); got != tc.want {
					t.Errorf("client saw %q, want %q", got, tc.want)
				}
				if tc.member == "" {
					return
				}
				if tc.closeClient {
					c.c.Close()
				}
				select {
				case got := <-seen:
					want := tc.member
					if pname == "rules" && tc.memberRules != "" {
						want = tc.memberRules
					}
					if got != want {
						t.Errorf("member saw %q, want %q", got, want)
					}
				case <-time.After(10 * time.Second):
					t.Errorf("the member's connection did not end")
				}
			})
		}
	}
}

// stuckMember listens on addr with an accept queue of one, filled: the
// SYNs of further connects are dropped, so they never complete.
func stuckMember(t *testing.T, addr string) {
	t.Helper()
	a := ap(addr)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: a.Addr().As4(), Port: int(a.Port())}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
}

// TestTCPClientTimeout: fastl4 client-timeout resets a client whose
// member connect does not complete, before the connect timeout would, on
// the loops and on goroutine flows; without it the client waits on.
func TestTCPClientTimeout(t *testing.T) {
	cases := []struct {
		name  string
		close *TCPClose
		want  string
	}{
		{"client-timeout", &TCPClose{ClientTimeout: time.Second}, "|RST"},
		{"none", nil, "|open"},
	}
	paths := tcpOptsPaths(t)
	paths["rules"] = func(v *Virtual) { v.Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { set seen 1 }") }
	i := 0
	for _, pname := range []string{"loop", "goroutine", "rules"} {
		for _, tc := range cases {
			i++
			vsAddr := "127.14.3." + strconv.Itoa(i) + ":8000"
			member := "127.14.4." + strconv.Itoa(i) + ":9000"
			path := paths[pname]
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				stuckMember(t, member)
				p, _ := newPlane(t)
				cfg := basic(vsAddr, member)
				v := cfg.Virtuals["/Common/vs"]
				v.TCPClose, v.ServerTCP = tc.close, &TCPSide{ConnectTimeout: time.Minute}
				path(v)
				mustApply(t, p, cfg)
				c := dialVS(t, vsAddr)
				bound := 8 * time.Second
				if tc.close == nil {
					bound = 3 * time.Second
				}
				if got := outcome(c.c, bound); got != tc.want {
					t.Errorf("client saw %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// md5Control gives a socket an RFC 2385 key for every IPv4 peer; "" none.
func md5Control(key string) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		if key == "" {
			return nil
		}
		var serr error
		err := rc.Control(func(fd uintptr) {
			m := unix.TCPMD5Sig{Flags: unix.TCP_MD5SIG_FLAG_PREFIX}
			m.Addr.Family = unix.AF_INET
			m.Keylen = uint16(copy(m.Key[:], key))
			serr = unix.SetsockoptTCPMD5Sig(int(fd), unix.IPPROTO_TCP, unix.TCP_MD5SIG_EXT, &m)
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// TestTCPMD5Signature: md5-signature on the member side connects only to
// a member that has the same key, and on the client side the virtual's
// listener takes only clients that sign with its key.
func TestTCPMD5Signature(t *testing.T) {
	probe, err := (&net.ListenConfig{Control: md5Control("probe")}).Listen(t.Context(), "tcp", "127.14.5.250:0")
	if err != nil {
		t.Skipf("the kernel takes no TCP MD5 signatures (CONFIG_TCP_MD5SIG): %v", err)
	}
	probe.Close()
	cases := []struct {
		name                 string
		serverKey, memberKey string
		listenKey, clientKey string
		answered             bool
	}{
		{name: "member same key", serverKey: "s3cret", memberKey: "s3cret", answered: true},
		{name: "member other key", serverKey: "s3cret", memberKey: "other", answered: false},
		{name: "member signs, proxy does not", memberKey: "s3cret", answered: false},
		{name: "client same key", listenKey: "front", clientKey: "front", answered: true},
		{name: "client without key", listenKey: "front", answered: false},
		{name: "client wrong key", listenKey: "front", clientKey: "back", answered: false},
		{name: "none", answered: true},
	}
	for i, tc := range cases {
		vsAddr := "127.14.5." + strconv.Itoa(i+1) + ":8000"
		member := "127.14.6." + strconv.Itoa(i+1) + ":9000"
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ml, err := (&net.ListenConfig{Control: md5Control(tc.memberKey)}).Listen(t.Context(), "tcp", member)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ml.Close() })
			go func() {
				for {
					c, err := ml.Accept()
					if err != nil {
						return
					}
					c.Write([]byte("signed"))
					c.Close()
				}
			}()
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			v := cfg.Virtuals["/Common/vs"]
			if tc.serverKey != "" {
				v.ServerTCP = &TCPSide{MD5Key: tc.serverKey}
			}
			if tc.listenKey != "" {
				v.ClientTCP = &TCPSide{MD5Key: tc.listenKey}
			}
			mustApply(t, p, cfg)
			d := net.Dialer{Timeout: 2 * time.Second, Control: md5Control(tc.clientKey)}
			c, err := d.Dial("tcp", vsAddr)
			got := "no connection"
			if err == nil {
				defer c.Close()
				got = outcome(c, 5*time.Second)
			}
			if answered := got == "signed|FIN"; answered != tc.answered {
				t.Errorf("client saw %q (dial: %v), answered %v, want %v", got, err, answered, tc.answered)
			}
		})
	}
}

// TestTCPCloseSocketOptions reads time-wait-timeout 0 (SO_LINGER 0) and
// max-retrans with minimum-rto (TCP_USER_TIMEOUT) back from the plane's
// client and member sockets, on each engine; unset, neither is there.
func TestTCPCloseSocketOptions(t *testing.T) {
	cases := []struct {
		name           string
		client, server *TCPSide
		wc, ws         sockopt.Reading // NoLinger and UserTimeout compared
	}{
		{name: "defaults"},
		{
			name:   "set",
			client: &TCPSide{NoLinger: true},
			server: &TCPSide{NoLinger: true, UserTimeout: UserTimeout(3, 200*time.Millisecond)},
			wc:     sockopt.Reading{NoLinger: true},
			ws:     sockopt.Reading{NoLinger: true, UserTimeout: 3000},
		},
	}
	i := 0
	for pname, path := range tcpOptsPaths(t) {
		for _, tc := range cases {
			i++
			vsAddr := "127.14.7." + strconv.Itoa(i) + ":8000"
			member := "127.14.8." + strconv.Itoa(i) + ":9000"
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				cfd, sfd := proxiedSockets(t, vsAddr, member, func(cfg *Config) {
					v := cfg.Virtuals["/Common/vs"]
					v.ClientTCP, v.ServerTCP = tc.client, tc.server
					path(v)
				})
				for _, s := range []struct {
					side string
					fd   int
					want sockopt.Reading
				}{
					{"client", cfd, tc.wc},
					{"server", sfd, tc.ws},
				} {
					r, err := sockopt.Read(s.fd)
					if err != nil {
						t.Fatalf("%s: %v", s.side, err)
					}
					if r.NoLinger != s.want.NoLinger || r.UserTimeout != s.want.UserTimeout {
						t.Errorf("%s socket: linger 0 %v, user timeout %d ms; want %v, %d ms", s.side, r.NoLinger, r.UserTimeout, s.want.NoLinger, s.want.UserTimeout)
					}
				}
			})
		}
	}
}

// TestTCPProxyBufferHigh: with a member that reads nothing and a client
// that sends more than the member's window, the bytes the plane keeps
// queued for the member (its socket's unsent bytes, as the kernel counts
// them) stay within proxy-buffer-high and the one write past it; without
// it they fill the whole send buffer.
func TestTCPProxyBufferHigh(t *testing.T) {
	const high = 32 << 10
	cases := []struct {
		name    string
		server  *TCPSide
		bounded bool
	}{
		{"proxy-buffer-high", &TCPSide{SendBuffer: 1 << 20, NotSentLowat: high}, true},
		{"send buffer only", &TCPSide{SendBuffer: 1 << 20}, false},
	}
	for i, tc := range cases {
		vsAddr := "127.14.10." + strconv.Itoa(i+1) + ":8000"
		member := "127.14.11." + strconv.Itoa(i+1) + ":9000"
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			t.Cleanup(func() { close(done) })
			from := make(chan netip.AddrPort, 1)
			closeMember(t, member, func(c *net.TCPConn) string {
				from <- netip.MustParseAddrPort(c.RemoteAddr().String())
				<-done
				return "held"
			})
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].ServerTCP = tc.server
			mustApply(t, p, cfg)
			c := dialVS(t, vsAddr)
			go c.c.Write(make([]byte, 4<<20))
			var local netip.AddrPort
			select {
			case local = <-from:
			case <-time.After(5 * time.Second):
				t.Fatal("the member got no connection")
			}
			fd := proxySocket(t, local, ap(member))
			// Wait until the queue stops moving (the member's window and
			// the plane's queue are full), then read it.
			last, same := uint32(0), 0
			for i := 0; i < 200 && same < 5; i++ {
				time.Sleep(20 * time.Millisecond)
				ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
				if err != nil {
					t.Fatal(err)
				}
				if ti.Notsent_bytes == last && last > 0 {
					same++
				} else {
					last, same = ti.Notsent_bytes, 0
				}
			}
			t.Logf("unsent for the member: %d bytes", last)
			const oneWrite = 64 << 10 // a splice's most, the write that crosses the bound
			if bounded := last <= high+oneWrite; bounded != tc.bounded {
				t.Errorf("%d bytes queued unsent for the member; bounded by %d: %v, want %v", last, high+oneWrite, bounded, tc.bounded)
			}
		})
	}
}
