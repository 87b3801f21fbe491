//go:build linux

package dataplane

import (
	"bufio"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// rstLines collects the reset-cause lines of a plane.
type rstLines struct {
	mu    sync.Mutex
	lines []string
}

func (r *rstLines) add(l string) { r.mu.Lock(); r.lines = append(r.lines, l); r.mu.Unlock() }

func (r *rstLines) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// waitEnded waits (bounded) for c to be reset or closed by the virtual.
func waitEnded(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the virtual did not end the connection")
	}
}

// TestResetCauseLog runs each cause of reset the data paths report with
// real clients and members, and checks its 01230140 line: from the
// virtual's address to the client's, with the cause's words. With the log
// off the same reset writes nothing.
func TestResetCauseLog(t *testing.T) {
	cert, key, _ := testCert(t, "app.example")
	startServer(t, "127.27.0.50:9000", "S1")
	startHTTPServer(t, "127.27.0.51:80", "H1")
	// A port nothing listens on: the member refuses the connect.
	refused := "127.27.0.52:9"

	cases := []struct {
		name string
		vs   string
		cfg  func(vs string) *Config
		// run makes the reset and returns the client's address.
		run  func(t *testing.T, vs string) netip.AddrPort
		want string
	}{
		{name: "no member", vs: "127.27.0.10:80",
			cfg:  func(vs string) *Config { return basic(vs) },
			run:  dialAndWait,
			want: "[l4:lb] No server selected"},
		{name: "member refuses", vs: "127.27.0.11:80",
			cfg:  func(vs string) *Config { return basic(vs, refused) },
			run:  dialAndWait,
			want: "[l4:connect] TCP 3WHS rejected"},
		{name: "member refuses, rule flow", vs: "127.27.0.20:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, refused)
				// A rule with a proxy event: the flow runs on a goroutine.
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { set x 1 }`)
				return cfg
			},
			run:  dialAndWait,
			want: "[l4:connect] TCP 3WHS rejected"},
		{name: "no member, rule flow", vs: "127.27.0.21:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs)
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { set x 1 }`)
				return cfg
			},
			run:  dialAndWait,
			want: "[l4:lb] No server selected"},
		{name: "idle timeout, rule flow", vs: "127.27.0.22:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { set x 1 }`)
				return cfg
			},
			run:  askAndWait,
			want: "[l4:idle] Idle timeout (clientside)"},
		{name: "idle timeout", vs: "127.27.0.12:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
				return cfg
			},
			run:  askAndWait,
			want: "[l4:idle] Idle timeout (clientside)"},
		{name: "rule reject", vs: "127.27.0.13:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { reject }`)
				return cfg
			},
			run:  dialAndWait,
			want: "[l4:rule] iRule execution (reject)"},
		{name: "connection limit", vs: "127.27.0.14:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].ConnectionLimit = 1
				return cfg
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				first := dialFrom(t, "127.27.0.1", vs)
				first.mustAsk("hello") // holds the one place
				defer first.c.Close()
				return dialAndWait(t, vs)
			},
			want: "[l4:limit] Connection limit reached"},
		{name: "source not matched", vs: "127.27.0.15:80",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].Source = netip.MustParsePrefix("127.27.9.0/24")
				return cfg
			},
			run:  dialAndWait,
			want: "[l4:listener] No local listener"},
		{name: "client-ssl handshake", vs: "127.27.0.16:443",
			cfg: func(vs string) *Config {
				cfg := basic(vs, "127.27.0.50:9000")
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				return cfg
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				c := dialFrom(t, "127.27.0.1", vs)
				// A plaintext client: its first bytes are no TLS hello.
				io.WriteString(c.c, "GET / HTTP/1.0\r\n\r\n")
				waitEnded(t, c.c)
				return netip.MustParseAddrPort(c.c.LocalAddr().String())
			},
			want: "[l4:ssl] SSL handshake failed"},
		{name: "http client-ssl handshake", vs: "127.27.0.23:443",
			cfg: func(vs string) *Config {
				cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, "", "127.27.0.51:80")
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				return cfg
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				return httpAndWait(t, vs, httpReq("a.example", "/"))
			},
			want: "[mblb:ssl] SSL handshake failed"},
		{name: "http client-ssl handshake, rules", vs: "127.27.0.24:443",
			cfg: func(vs string) *Config {
				cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, `when HTTP_REQUEST { set x 1 }`, "127.27.0.51:80")
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				return cfg
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				return httpAndWait(t, vs, httpReq("a.example", "/"))
			},
			want: "[mblb:ssl] SSL handshake failed"},
		{name: "http header too large", vs: "127.27.0.17:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{MaxHeaderSize: 512}, "", "127.27.0.51:80")
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				return httpAndWait(t, vs, httpReq("a.example", "/", "X-Big: "+strings.Repeat("x", 2000)))
			},
			want: "[mblb:http] HTTP header exceeded maximum allowed size"},
		{name: "http no member", vs: "127.27.0.18:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, "")
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				return httpAndWait(t, vs, httpReq("a.example", "/"))
			},
			want: "[mblb:lb] No server selected"},
		{name: "http rule reject", vs: "127.27.0.19:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when HTTP_REQUEST { reject }`, "127.27.0.51:80")
			},
			run: func(t *testing.T, vs string) netip.AddrPort {
				return httpAndWait(t, vs, httpReq("a.example", "/"))
			},
			want: "[mblb:rule] iRule execution (reject)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			mustApply(t, p, tc.cfg(tc.vs))
			var got rstLines
			p.SetResetCauseLog(got.add)
			client := tc.run(t, tc.vs)
			want := "01230140:6: RST sent from " + tc.vs + " to " + client.String() + ", " + tc.want
			eventually(t, "the line "+want, func() bool {
				for _, l := range got.all() {
					if l == want {
						return true
					}
				}
				return false
			})

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

// dialAndWait connects from 127.27.0.1, waits for the virtual to end the
// connection and returns the client's address. The socket is bound
// before its connect, so that its address is known when the reset comes
// before the connect's answer is read (the dial then fails with it).
// askAndWait asks one line from 127.27.0.1 and waits for the flow to
// end; it returns the client's address.
func askAndWait(t *testing.T, vs string) netip.AddrPort {
	t.Helper()
	c := dialFrom(t, "127.27.0.1", vs)
	c.mustAsk("hello")
	waitEnded(t, c.c)
	return netip.MustParseAddrPort(c.c.LocalAddr().String())
}

func dialAndWait(t *testing.T, vs string) netip.AddrPort {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "client")
	defer f.Close()
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 27, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	client := netip.AddrPortFrom(netip.MustParseAddr("127.27.0.1"), uint16(sa.(*syscall.SockaddrInet4).Port))
	dst := ap(vs)
	tv := syscall.Timeval{Sec: 5}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	switch err := connectRetrying(fd, &syscall.SockaddrInet4{Addr: dst.Addr().As4(), Port: int(dst.Port())}); err {
	case nil:
	case syscall.ECONNRESET, syscall.ECONNREFUSED:
		return client // reset before the connect returned
	default:
		t.Fatalf("connect %s: %v", vs, err)
	}
	b := make([]byte, 512)
	for i := 0; i < 100; i++ { // until the end: EOF, the reset, or the timeout
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

// httpAndWait sends one request from 127.27.0.1 and waits for the
// virtual to end the connection (a response, if any, is read and
// dropped).
func httpAndWait(t *testing.T, vs, req string) netip.AddrPort {
	t.Helper()
	c := dialFrom(t, "127.27.0.1", vs)
	c.c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c.c, req)
	br := bufio.NewReader(c.c)
	io.Copy(io.Discard, br)
	return netip.MustParseAddrPort(c.c.LocalAddr().String())
}
