//go:build linux

package dataplane

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"golang.org/x/sys/unix"
)

// peerMember is a member that either resets each connection once it has
// read a line (reset), or holds it and notes how it ended: the address
// the connection came from and whether it was reset.
type peerMember struct {
	reset bool
	mu    sync.Mutex
	from  []netip.AddrPort
	lines int // lines read: the proxy passed the client's on
	ended []error
}

func startPeerMember(t *testing.T, addr string, reset bool) *peerMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &peerMember{reset: reset}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go m.serve(c.(*net.TCPConn))
		}
	}()
	return m
}

func (m *peerMember) serve(c *net.TCPConn) {
	m.mu.Lock()
	m.from = append(m.from, netip.MustParseAddrPort(c.RemoteAddr().String()))
	m.mu.Unlock()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	_, err := br.ReadString('\n')
	if err == nil {
		m.mu.Lock()
		m.lines++
		m.mu.Unlock()
	}
	if m.reset {
		c.SetLinger(0)
		c.Close()
		return
	}
	if err == nil {
		_, err = io.Copy(io.Discard, br)
	}
	c.Close()
	m.mu.Lock()
	m.ended = append(m.ended, err)
	m.mu.Unlock()
}

// read is the count of lines the member read.
func (m *peerMember) read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lines
}

// last is the address the member's last connection came from and how it
// ended (nil while open, or ended with a FIN).
func (m *peerMember) last() (netip.AddrPort, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var from netip.AddrPort
	if len(m.from) > 0 {
		from = m.from[len(m.from)-1]
	}
	var err error
	if len(m.ended) > 0 {
		err = m.ended[len(m.ended)-1]
	}
	return from, len(m.ended), err
}

// TestResetCausePeers runs the resets the proxy passes on or sends to a
// member: the member's reset reaches the client as a reset, logged with
// BIG-IP's "{peer} TCP RST from remote system"; the client's reaches the
// member, logged from the server side's address to the member's; an
// idle timeout resets the member too; a rule's runtime error resets the
// client (TCL error).
func TestResetCausePeers(t *testing.T) {
	resetter := "127.35.0.50:9000"
	holder := "127.35.0.51:9000"
	startPeerMember(t, resetter, true)
	hold := startPeerMember(t, holder, false)
	startHTTPServer(t, "127.35.0.52:80", "H1")
	withRule := func(cfg *Config, rule string) *Config {
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
		return cfg
	}

	// A member that answers one line and closes: the proxy then sends
	// the client close_notify and waits for the client's.
	closer := "127.35.0.53:9000"
	startCloser(t, closer)
	cert, key, _ := testCert(t, "app.example")
	alertVS := func(vs string, alert time.Duration, rule string) *Config {
		cfg := basic(vs, closer)
		if rule != "" {
			withRule(cfg, rule)
		}
		cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
		cfg.Virtuals["/Common/vs"].TLS.ClientAlert = alert
		return cfg
	}
	// A TLS member that reads to the proxy's close_notify and then
	// never sends its own.
	silentMember := "127.35.0.54:9443"
	startSilentTLS(t, silentMember, cert, key)
	// halfClose: a plaintext client sends a line and its FIN; the proxy
	// passes them on as close_notify and waits for the member's.
	halfClose := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		c := dialFrom(t, "127.35.0.1", vs)
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c.c, "hello\n")
		c.c.CloseWrite()
		if _, err := io.Copy(io.Discard, c.c); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the client got %v, not a reset", err)
		}
		return ap(vs), netip.MustParseAddrPort(c.c.LocalAddr().String())
	}
	// memberResetTLS is memberReset for a TLS client.
	memberResetTLS := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(ap("127.35.0.1:0"))}
		c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "hello\n")
		if _, err := io.Copy(io.Discard, c); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the client got %v, not the member's reset passed on", err)
		}
		return ap(vs), netip.MustParseAddrPort(c.LocalAddr().String())
	}
	// silentTLS: a TLS client that reads the answer and the close_notify
	// after it, and never sends its own; the virtual resets it.
	silentTLS := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(ap("127.35.0.1:0"))}
		c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "hello\n")
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("the answer and close_notify: %v", err)
		}
		// The socket, watched without sending: half-closed by the
		// virtual (CLOSE_WAIT) until its reset closes it once
		// alert-timeout ran out.
		rc, err := c.NetConn().(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the virtual's reset", func() bool {
			var st uint8
			rc.Control(func(fd uintptr) {
				if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
					st = info.State
				}
			})
			return st == unix.BPF_TCP_CLOSE
		})
		return ap(vs), netip.MustParseAddrPort(c.LocalAddr().String())
	}
	const proxyEvent = `when CLIENT_ACCEPTED { set x 1 }`
	// memberReset: the client's line is answered by the member's reset,
	// which the client gets as a reset.
	memberReset := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		c := dialFrom(t, "127.35.0.1", vs)
		c.c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c.c, "hello\n")
		_, err := io.Copy(io.Discard, c.c)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the client got %v, not the member's reset passed on", err)
		}
		return ap(vs), netip.MustParseAddrPort(c.c.LocalAddr().String())
	}
	// clientReset: the client resets an open flow; the member gets a
	// reset from the server side's address.
	clientReset := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		c := dialFrom(t, "127.35.0.1", vs)
		_, n0, _ := hold.last()
		l0 := hold.read()
		io.WriteString(c.c, "hello\n")
		eventually(t, "the line to reach the member", func() bool { return hold.read() > l0 })
		c.c.SetLinger(0)
		c.c.Close()
		var from netip.AddrPort
		eventually(t, "the member's connection to end", func() bool {
			var n int
			from, n, _ = hold.last()
			return n > n0
		})
		if _, _, err := hold.last(); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the member's connection ended with %v, not a reset", err)
		}
		return from, ap(holder)
	}
	// memberIdle: the flow idles out; the member's connection is reset.
	memberIdle := func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) {
		_, n0, _ := hold.last()
		c := dialFrom(t, "127.35.0.1", vs)
		io.WriteString(c.c, "hello\n")
		var from netip.AddrPort
		eventually(t, "the member's connection to end", func() bool {
			var n int
			from, n, _ = hold.last()
			return n > n0
		})
		if _, _, err := hold.last(); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the member's connection ended with %v, not a reset", err)
		}
		return from, ap(holder)
	}
	toClient := func(run func(*testing.T, string) netip.AddrPort) func(*testing.T, string) (netip.AddrPort, netip.AddrPort) {
		return func(t *testing.T, vs string) (netip.AddrPort, netip.AddrPort) { return ap(vs), run(t, vs) }
	}
	cases := []struct {
		name string
		vs   string
		cfg  func(vs string) *Config
		run  func(t *testing.T, vs string) (from, to netip.AddrPort)
		want string
		// alerts names the TLS profile whose Alert Timeouts count the
		// reset ("": none).
		alerts ProfileKind
	}{
		{name: "member resets", vs: "127.35.0.10:80",
			cfg:  func(vs string) *Config { return basic(vs, resetter) },
			run:  memberReset,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "member resets, rule flow", vs: "127.35.0.11:80",
			cfg:  func(vs string) *Config { return withRule(basic(vs, resetter), proxyEvent) },
			run:  memberReset,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "member resets, client-ssl loop flow", vs: "127.35.0.22:443",
			cfg: func(vs string) *Config {
				cfg := basic(vs, resetter)
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				return cfg
			},
			run:  memberResetTLS,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "member resets, client-ssl goroutine flow", vs: "127.35.0.23:443",
			cfg: func(vs string) *Config {
				cfg := withRule(basic(vs, resetter), `when SERVER_CONNECTED { set x 1 }`)
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				return cfg
			},
			run:  memberResetTLS,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "client resets", vs: "127.35.0.12:80",
			cfg:  func(vs string) *Config { return basic(vs, holder) },
			run:  clientReset,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "client resets, rule flow", vs: "127.35.0.13:80",
			cfg:  func(vs string) *Config { return withRule(basic(vs, holder), proxyEvent) },
			run:  clientReset,
			want: "[l4:peer-rst] {peer} TCP RST from remote system"},
		{name: "idle timeout, member side", vs: "127.35.0.14:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, holder)
				cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
				return cfg
			},
			run:  memberIdle,
			want: "[l4:idle] {peer} Idle timeout (clientside)"},
		{name: "idle timeout, member side, rule flow", vs: "127.35.0.15:80",
			cfg: func(vs string) *Config {
				cfg := withRule(basic(vs, holder), proxyEvent)
				cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
				return cfg
			},
			run:  memberIdle,
			want: "[l4:idle] {peer} Idle timeout (clientside)"},
		{name: "rule error", vs: "127.35.0.16:80",
			cfg:  func(vs string) *Config { return withRule(basic(vs, holder), `when CLIENT_ACCEPTED { set x $nosuch }`) },
			run:  toClient(func(t *testing.T, vs string) netip.AddrPort { return sendAndWait(t, vs, "") }),
			want: "[l4:tcl] TCL error"},
		{name: "http rule error", vs: "127.35.0.17:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when HTTP_REQUEST { set x $nosuch }`, "127.35.0.52:80")
			},
			run: toClient(func(t *testing.T, vs string) netip.AddrPort {
				return sendAndWait(t, vs, httpReq("a.example", "/"))
			}),
			want: "[mblb:tcl] TCL error"},
		{name: "http rule error, CLIENT_ACCEPTED", vs: "127.35.0.18:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when CLIENT_ACCEPTED { set x $nosuch }`, "127.35.0.52:80")
			},
			run: toClient(func(t *testing.T, vs string) netip.AddrPort {
				return sendAndWait(t, vs, httpReq("a.example", "/"))
			}),
			want: "[mblb:tcl] TCL error"},
		{name: "message rule error, CLIENT_DATA", vs: "127.35.0.24:9000",
			cfg: func(vs string) *Config {
				cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, holder)
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { set x $nosuch }`)
				return cfg
			},
			run: toClient(func(t *testing.T, vs string) netip.AddrPort {
				return sendAndWait(t, vs, "hello\n")
			}),
			want: "[mblb:tcl] TCL error"},
		{name: "client-ssl alert-timeout", vs: "127.35.0.19:443",
			cfg:    func(vs string) *Config { return alertVS(vs, time.Second, "") },
			run:    silentTLS,
			want:   "[l4:ssl-alert] SSL alert timeout exceeded",
			alerts: ProfileClientSSL},
		{name: "client-ssl alert-timeout, goroutine flow", vs: "127.35.0.20:443",
			// SERVER_CONNECTED keeps the flow off the TLS event loops.
			cfg:    func(vs string) *Config { return alertVS(vs, time.Second, `when SERVER_CONNECTED { set x 1 }`) },
			run:    silentTLS,
			want:   "[l4:ssl-alert] SSL alert timeout exceeded",
			alerts: ProfileClientSSL},
		{name: "server-ssl alert-timeout", vs: "127.35.0.21:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, silentMember)
				cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t), ServerAlert: time.Second}
				return cfg
			},
			run:    halfClose,
			want:   "[l4:ssl-alert] {peer} SSL alert timeout exceeded",
			alerts: ProfileServerSSL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			mustApply(t, p, tc.cfg(tc.vs))
			var got rstLines
			p.SetResetCauseLog(got.add)
			from, to := tc.run(t, tc.vs)
			want := "01230140:6: RST sent from " + from.String() + " to " + to.String() + ", " + tc.want
			eventually(t, "the line "+want, func() bool {
				for _, l := range got.all() {
					if l == want {
						return true
					}
				}
				return false
			})
			if tc.alerts != "" {
				name := map[ProfileKind]string{ProfileClientSSL: "/Common/cs", ProfileServerSSL: "/Common/ss"}[tc.alerts]
				if n := p.ProfileStats(tc.alerts, name, []string{"/Common/vs"}).SSL.AlertTimeouts; n != 1 {
					t.Fatalf("%s Alert Timeouts %d, want 1", name, n)
				}
			}
			// Off: the same reset is logged no more.
			p.SetResetCauseLog(nil)
			before := len(got.all())
			eventually(t, "the flows to end", func() bool { return p.table.Len() == 0 })
			tc.run(t, tc.vs)
			if n := len(got.all()); n != before {
				t.Fatalf("with the log off, %d lines: %q", n-before, got.all()[before:])
			}
		})
	}
}

// startCloser runs a member that answers one line with one line and
// closes.
func startCloser(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					io.WriteString(c, "bye\n")
				}
			}()
		}
	}()
}

// startSilentTLS runs a TLS member that reads until the peer's
// close_notify and then holds the connection open, answering nothing.
func startSilentTLS(t *testing.T, addr string, cert *tlsprof.Cert, key *tlsprof.Key) {
	t.Helper()
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	done, stop := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop); ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, c) // to close_notify, or the proxy's reset
				select {               // held open, silent
				case <-stop:
				case <-time.After(10 * time.Second):
				}
				c.(*tls.Conn).NetConn().Close()
			}()
		}
	}()
}

// sendAndWait connects from 127.35.0.1, sends req (if any) and waits
// for the virtual to end the connection; it returns the client's
// address. The socket is bound before its connect, so that its address
// is known when the reset comes before the connect returned.
// connectRetrying is a blocking connect(2) that a signal may interrupt
// (the runtime preempts goroutines with one): the handshake then goes on
// in the kernel, and connecting again says how it ended (EALREADY while
// it goes on, EISCONN once made). Bounded: 5 seconds, as the socket's
// other timeouts.
func connectRetrying(fd int, sa syscall.Sockaddr) error {
	err := syscall.Connect(fd, sa)
	for deadline := time.Now().Add(5 * time.Second); (err == syscall.EINTR || err == syscall.EALREADY) && time.Now().Before(deadline); {
		if err == syscall.EALREADY {
			time.Sleep(time.Millisecond)
		}
		err = syscall.Connect(fd, sa)
	}
	if err == syscall.EISCONN {
		return nil
	}
	return err
}

func sendAndWait(t *testing.T, vs, req string) netip.AddrPort {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 35, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	client := netip.AddrPortFrom(netip.MustParseAddr("127.35.0.1"), uint16(sa.(*syscall.SockaddrInet4).Port))
	tv := syscall.Timeval{Sec: 5}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	dst := ap(vs)
	switch err := connectRetrying(fd, &syscall.SockaddrInet4{Addr: dst.Addr().As4(), Port: int(dst.Port())}); err {
	case nil:
	case syscall.ECONNRESET, syscall.ECONNREFUSED:
		return client // reset before the connect returned
	default:
		t.Fatalf("connect %s: %v", vs, err)
	}
	if req != "" {
		if _, err := syscall.Write(fd, []byte(req)); err != nil {
			return client // reset already
		}
	}
	b := make([]byte, 512)
	for i := 0; i < 1000; i++ { // until the end: EOF, the reset, or the timeout
		n, err := syscall.Read(fd, b)
		if err == syscall.EAGAIN {
			t.Fatalf("the virtual did not end the connection")
		}
		if n <= 0 || err != nil {
			break
		}
	}
	return client
}
