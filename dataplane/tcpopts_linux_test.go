//go:build linux

package dataplane

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// proxySocket finds the plane's own socket from local to peer among this
// process's descriptors, so a test reads what the proxy set on it.
func proxySocket(t *testing.T, local, peer netip.AddrPort) int {
	t.Helper()
	for i := 0; i < 100; i++ {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot list descriptors: %v", err)
		}
		for _, e := range ents {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || !strings.HasPrefix(l, "socket:") {
				continue
			}
			sa, err1 := unix.Getsockname(fd)
			pa, err2 := unix.Getpeername(fd)
			if err1 != nil || err2 != nil {
				continue
			}
			if addrOf(sa) == local && addrOf(pa) == peer {
				return fd
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no socket %s -> %s", local, peer)
	return -1
}

// proxiedSockets runs one request through a virtual at vsAddr over one
// member, with the virtual set by setup, and returns the plane's own
// client-side and member-side sockets, to read what it set on them.
func proxiedSockets(t *testing.T, vsAddr, member string, setup func(cfg *Config)) (client, server int) {
	t.Helper()
	srv := startServer(t, member, "S1")
	p, _ := newPlane(t)
	cfg := basic(vsAddr, member)
	setup(cfg)
	mustApply(t, p, cfg)
	c := dialVS(t, vsAddr)
	if got := c.mustAsk("hello"); got != "S1 Response" {
		t.Fatalf("answer %q", got)
	}
	cl := netip.MustParseAddrPort(c.c.LocalAddr().String())
	return proxySocket(t, ap(vsAddr), cl), proxySocket(t, srv.lastRemote(), ap(member))
}

func addrOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// tcpOptsPaths are the engines a flow of a virtual can run on: the event
// loops (plain), goroutines (a stream profile), and message-based
// balancing.
func tcpOptsPaths(t *testing.T) map[string]func(v *Virtual) {
	t.Helper()
	e, err := streamfilter.Parse("@zq-never-seen@x@")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func(v *Virtual){
		"loop":      func(v *Virtual) {},
		"goroutine": func(v *Virtual) { v.Stream = &mblb.StreamOptions{Profile: "/Common/s", Expr: e} },
		"mblb":      func(v *Virtual) { v.MBLB = &MBLB{Profile: "/Common/mblb"} },
	}
}

// TestTCPProfileSocketOptions reads the tcp profile's settings and the
// pool's ToS back from the plane's real sockets, on each engine: the
// client's socket takes the client side and ip-tos-to-client, the member
// connection the server side and ip-tos-to-server; unset, the sockets
// keep TCP_NODELAY and the system's congestion control.
func TestTCPProfileSocketOptions(t *testing.T) {
	avail := sockopt.Available()
	if !avail["reno"] || !avail["cubic"] {
		t.Skip("the kernel lacks reno or cubic congestion control")
	}
	sysDefault, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	def := strings.TrimSpace(string(sysDefault))
	type want struct {
		noDelay bool
		sndbuf  int // 0: not checked
		rcvbuf  int
		cc      string
		tos     int
	}
	cases := []struct {
		name           string
		client, server *TCPSide
		poolToS        TOS
		wc, ws         want
	}{
		{name: "defaults", wc: want{noDelay: true, cc: def}, ws: want{noDelay: true, cc: def}},
		{
			name:    "per side",
			client:  &TCPSide{Nagle: true, SendBuffer: 32768, Congestion: "reno", TOS: 0x10, SetTOS: true},
			server:  &TCPSide{QuickAck: true, RecvBuffer: 50000, Congestion: "cubic"},
			poolToS: TOS{Value: 0x28, Set: true},
			wc:      want{noDelay: false, sndbuf: 65536, cc: "reno", tos: 0x10},
			ws:      want{noDelay: true, rcvbuf: 100000, cc: "cubic", tos: 0x28},
		},
	}
	i := 0
	for pname, path := range tcpOptsPaths(t) {
		for _, tc := range cases {
			i++
			vsAddr := "127.71.1." + strconv.Itoa(i) + ":8000"
			member := "127.71.2." + strconv.Itoa(i) + ":9000"
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				cfd, sfd := proxiedSockets(t, vsAddr, member, func(cfg *Config) {
					v := cfg.Virtuals["/Common/vs"]
					v.ClientTCP, v.ServerTCP = tc.client, tc.server
					cfg.Pools["/Common/pool"].ToSServer = tc.poolToS
					path(v)
				})
				check := func(side string, fd int, w want) {
					r, err := sockopt.Read(fd)
					if err != nil {
						t.Fatalf("%s: %v", side, err)
					}
					if r.NoDelay != w.noDelay || r.Congestion != w.cc || r.TOS != w.tos ||
						w.sndbuf != 0 && r.SendBuffer != w.sndbuf || w.rcvbuf != 0 && r.RecvBuffer != w.rcvbuf {
						t.Errorf("%s socket: %+v, want %+v", side, r, w)
					}
				}
				check("client", cfd, tc.wc)
				check("server", sfd, tc.ws)
			})
		}
	}
}

// TestTCPResetOnTimeout: an idle flow is reset on both sides by default
// (reset-on-timeout enabled) and closed with a FIN when it is disabled,
// as a real client sees it, on each engine.
func TestTCPResetOnTimeout(t *testing.T) {
	i := 0
	for pname, path := range tcpOptsPaths(t) {
		for _, fin := range []bool{false, true} {
			i++
			vsAddr := "127.71.3." + strconv.Itoa(i) + ":8000"
			member := "127.71.4." + strconv.Itoa(i) + ":9000"
			t.Run(pname+"/fin="+strconv.FormatBool(fin), func(t *testing.T) {
				t.Parallel()
				startServer(t, member, "S1")
				p, _ := newPlane(t)
				cfg := basic(vsAddr, member)
				v := cfg.Virtuals["/Common/vs"]
				v.IdleTimeout, v.IdleFIN = time.Second, fin
				path(v)
				mustApply(t, p, cfg)
				c := dialVS(t, vsAddr)
				c.mustAsk("hello")
				c.c.SetReadDeadline(time.Now().Add(8 * time.Second))
				_, err := c.r.ReadByte()
				switch {
				case fin && err != io.EOF:
					t.Fatalf("idle flow with reset-on-timeout disabled: %v, want a FIN (EOF)", err)
				case !fin && !errors.Is(err, syscall.ECONNRESET):
					t.Fatalf("idle flow with reset-on-timeout enabled: %v, want a reset", err)
				}
			})
		}
	}
}

// BenchmarkTCPOptsConnection opens a proxied connection per 64-byte round
// trip through a plain virtual, the tcp settings left at their defaults
// (which must cost what they did before they were acted on) and set on
// both sides.
func BenchmarkTCPOptsConnection(b *testing.B) {
	for i, set := range []bool{false, true} {
		name := "defaults"
		if set {
			name = "configured"
		}
		b.Run(name, func(b *testing.B) {
			vs, member := "127.71.5."+strconv.Itoa(2*i+1)+":8000", "127.71.5."+strconv.Itoa(2*i+2)+":9000"
			echoBackend(b, member)
			p := New(Options{})
			b.Cleanup(p.Close)
			cfg := basic(vs, member)
			if set {
				side := &TCPSide{Nagle: true, QuickAck: true, SendBuffer: 65536, RecvBuffer: 65536, TOS: 8, SetTOS: true}
				cfg.Virtuals["/Common/vs"].ClientTCP, cfg.Virtuals["/Common/vs"].ServerTCP = side, side
			}
			if err := p.Apply(nil, cfg); err != nil {
				b.Fatal(err)
			}
			connectionRoundTrips(b, vs)
		})
	}
}

// TestTCPProfileSocketOptionsTLS: a client-ssl virtual's sockets take
// the tcp settings too (the client's once its handshake is done).
func TestTCPProfileSocketOptionsTLS(t *testing.T) {
	avail := sockopt.Available()
	if !avail["reno"] || !avail["cubic"] {
		t.Skip("the kernel lacks reno or cubic congestion control")
	}
	cert, key, roots := testCert(t, "app.example")
	srv := startServer(t, "127.71.7.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.71.7.10:443", "127.71.7.11:9000")
	v := cfg.Virtuals["/Common/vs"]
	v.TLS = clientSSL(t, cert, key)
	v.ClientTCP = &TCPSide{Nagle: true, Congestion: "reno", TOS: 0x48, SetTOS: true}
	v.ServerTCP = &TCPSide{Congestion: "cubic"}
	mustApply(t, p, cfg)
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.71.7.10:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "S1 Response\n" {
		t.Fatalf("answer %q %v", line, err)
	}
	cr, _ := sockopt.Read(proxySocket(t, ap("127.71.7.10:443"), netip.MustParseAddrPort(c.LocalAddr().String())))
	if cr.NoDelay || cr.Congestion != "reno" || cr.TOS != 0x48 {
		t.Errorf("client socket %+v, want Nagle on, reno, ToS 0x48", cr)
	}
	sr, _ := sockopt.Read(proxySocket(t, srv.lastRemote(), ap("127.71.7.11:9000")))
	if !sr.NoDelay || sr.Congestion != "cubic" || sr.TOS != 0 {
		t.Errorf("server socket %+v, want TCP_NODELAY, cubic, ToS 0", sr)
	}
}
