//go:build linux

package dataplane

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// unbounded is SO_MAX_PACING_RATE's reading when no bound is set.
const unbounded = ^uint64(0)

// TestTCPPacingSocketOptions reads rate-pace-max-rate (SO_MAX_PACING_RATE)
// back from the plane's client and member sockets on each engine, and,
// where ss is installed, sees the kernel report the same bound; unset,
// the sockets are unbounded.
func TestTCPPacingSocketOptions(t *testing.T) {
	cases := []struct {
		name           string
		client, server *TCPSide
		wc, ws         uint64
	}{
		{name: "defaults", wc: unbounded, ws: unbounded},
		{name: "set", client: &TCPSide{PacingRate: 125000}, server: &TCPSide{PacingRate: 250000}, wc: 125000, ws: 250000},
	}
	i := 0
	for pname, path := range tcpOptsPaths(t) {
		for _, tc := range cases {
			i++
			vsAddr := "127.14.18." + strconv.Itoa(i) + ":8000"
			member := "127.14.19." + strconv.Itoa(i) + ":9000"
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				cfd, sfd := proxiedSockets(t, vsAddr, member, func(cfg *Config) {
					v := cfg.Virtuals["/Common/vs"]
					v.ClientTCP, v.ServerTCP = tc.client, tc.server
					path(v)
				})
				for _, s := range []struct {
					side string
					fd   int
					want uint64
				}{{"client", cfd, tc.wc}, {"server", sfd, tc.ws}} {
					r, err := sockopt.Read(s.fd)
					if err != nil {
						t.Fatalf("%s: %v", s.side, err)
					}
					if r.PacingRate != s.want {
						t.Errorf("%s socket: max pacing rate %d, want %d", s.side, r.PacingRate, s.want)
					}
				}
				if tc.wc == unbounded {
					return
				}
				// ss shows the rate and its bound in bits per second
				// (125000 B/s: 1000000bps) as pacing_rate RATE/BOUND.
				out, err := exec.Command("ss", "-tin", "src", vsAddr).Output()
				if err != nil {
					t.Logf("ss not run (%v): the bound was read back with getsockopt only", err)
					return
				}
				if !regexp.MustCompile(`pacing_rate \S+/1000000bps`).Match(out) {
					t.Errorf("ss -tin src %s shows no pacing_rate bound of 1000000bps:\n%s", vsAddr, out)
				}
			})
		}
	}
}

// TestTCPProxyBufferLow: behind a member that reads nothing, a flow
// (on the loops, a rule's or a stream profile's goroutines) waiting on
// the member's socket has moved its wake-up to
// proxy-buffer-low (TCP_NOTSENT_LOWAT twice low, read back while it
// waits), and gives it proxy-buffer-high back once the member read
// everything; without proxy-buffer-low the socket keeps high throughout.
func TestTCPProxyBufferLow(t *testing.T) {
	const high, low = 32 << 10, 4 << 10
	cases := []struct {
		name    string
		server  *TCPSide
		waiting int // TCP_NOTSENT_LOWAT while the flow waits
	}{
		{"proxy-buffer-low", &TCPSide{SendBuffer: 1 << 20, NotSentLowat: high, NotSentLow: low}, 2 * low},
		{"high only", &TCPSide{SendBuffer: 1 << 20, NotSentLowat: high}, high},
	}
	// The event loops, and goroutine flows: a rule's, a stream profile's.
	paths := tcpOptsPaths(t)
	paths["rules"] = func(v *Virtual) { v.Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { set seen 1 }") }
	nets := map[string][2]string{"loop": {"127.14.10.", "127.14.11."}, "rules": {"127.51.3.", "127.51.4."}, "goroutine": {"127.51.5.", "127.51.6."}}
	for _, pname := range []string{"loop", "rules", "goroutine"} {
		for i, tc := range cases {
			vsAddr := nets[pname][0] + strconv.Itoa(i+11) + ":8000"
			member := nets[pname][1] + strconv.Itoa(i+11) + ":9000"
			path := paths[pname]
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				start := make(chan struct{})
				got := make(chan int64, 1)
				from := make(chan netip.AddrPort, 1)
				closeMember(t, member, func(c *net.TCPConn) string {
					from <- netip.MustParseAddrPort(c.RemoteAddr().String())
					select {
					case <-start:
					case <-time.After(20 * time.Second):
					}
					n, _ := io.Copy(io.Discard, io.LimitReader(c, 4<<20))
					got <- n
					return "read"
				})
				p, _ := newPlane(t)
				cfg := basic(vsAddr, member)
				cfg.Virtuals["/Common/vs"].ServerTCP = tc.server
				path(cfg.Virtuals["/Common/vs"])
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
				lowat := func() int {
					v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				// Wait until the flow waits on the member: its queue stops
				// moving.
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
				if v := lowat(); v != tc.waiting {
					t.Errorf("TCP_NOTSENT_LOWAT %d while the flow waits (%d bytes unsent), want %d", v, last, tc.waiting)
				}
				close(start)
				select {
				case n := <-got:
					if n != 4<<20 {
						t.Fatalf("the member read %d bytes, want %d", n, 4<<20)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("the member did not get every byte")
				}
				if v := lowat(); v != high {
					t.Errorf("TCP_NOTSENT_LOWAT %d once the member read everything, want %d", v, high)
				}
			})
		}
	}
}

// mptcpAvailable skips t unless the kernel makes Multipath TCP
// connections on loopback: net.mptcp.enabled, and a Go client and
// listener with MPTCP on that agree.
func mptcpAvailable(t *testing.T, addr string) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/mptcp/enabled")
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("the kernel has no Multipath TCP (net.mptcp.enabled not 1)")
	}
	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Skipf("no MPTCP listener: %v", err)
	}
	defer l.Close()
	var d net.Dialer
	d.SetMultipathTCP(true)
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("no MPTCP connect: %v", err)
	}
	defer c.Close()
	if mp, err := c.(*net.TCPConn).MultipathTCP(); !mp || err != nil {
		t.Skipf("the kernel fell back to TCP on loopback (%v)", err)
	}
}

// mptcpMember answers each line with label Response and reports for
// every connection whether it is Multipath TCP.
func mptcpMember(t *testing.T, addr, label string) <-chan bool {
	t.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	mp := make(chan bool, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			is, _ := c.(*net.TCPConn).MultipathTCP()
			select {
			case mp <- is:
			default:
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					c.Write([]byte(label + " Response\n"))
				}
			}()
		}
	}()
	return mp
}

// TestMPTCP: a virtual whose client side has mptcp enabled listens with
// Multipath TCP: an MPTCP client's connection is MPTCP end to end with
// the plane, a plain client is served as before; a server side with it
// connects to members with MPTCP. A commit that turns it off opens the
// address again as plain TCP. On each engine.
func TestMPTCP(t *testing.T) {
	mptcpAvailable(t, "127.14.21.250:7000")
	cases := []struct {
		name           string
		client, server bool
	}{
		{"both", true, true},
		{"client side", true, false},
		{"server side", false, true},
		{"neither", false, false},
	}
	i := 0
	for _, pname := range []string{"loop", "goroutine", "mblb"} {
		for _, tc := range cases {
			i++
			vsAddr := "127.14.21." + strconv.Itoa(i) + ":8000"
			member := "127.14.22." + strconv.Itoa(i) + ":9000"
			path := tcpOptsPaths(t)[pname]
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				mp := mptcpMember(t, member, "S1")
				p, _ := newPlane(t)
				cfg := basic(vsAddr, member)
				v := cfg.Virtuals["/Common/vs"]
				v.ClientTCP, v.ServerTCP = &TCPSide{MPTCP: tc.client}, &TCPSide{MPTCP: tc.server}
				path(v)
				mustApply(t, p, cfg)
				for _, mpClient := range []bool{true, false} {
					var d net.Dialer
					d.Timeout = 2 * time.Second
					d.SetMultipathTCP(mpClient)
					c, err := d.Dial("tcp", vsAddr)
					if err != nil {
						t.Fatal(err)
					}
					c.Write([]byte("hello\n"))
					c.SetReadDeadline(time.Now().Add(5 * time.Second))
					line, err := bufio.NewReader(c).ReadString('\n')
					if err != nil || line != "S1 Response\n" {
						t.Fatalf("MPTCP client %v: answer %q, %v", mpClient, line, err)
					}
					is, _ := c.(*net.TCPConn).MultipathTCP()
					c.Close()
					if want := mpClient && tc.client; is != want {
						t.Errorf("MPTCP client %v: the connection is MPTCP %v, want %v", mpClient, is, want)
					}
					select {
					case got := <-mp:
						if got != tc.server {
							t.Errorf("the member's connection is MPTCP %v, want %v", got, tc.server)
						}
					case <-time.After(5 * time.Second):
						t.Fatal("the member saw no connection")
					}
				}
				if !tc.client {
					return
				}
				// Off again: the listener is plain TCP after the commit
				// (a configuration of its own: the plane keeps the last).
				cfg = basic(vsAddr, member)
				v = cfg.Virtuals["/Common/vs"]
				v.ServerTCP = &TCPSide{MPTCP: tc.server}
				path(v)
				mustApply(t, p, cfg)
				var d net.Dialer
				d.SetMultipathTCP(true)
				c, err := d.Dial("tcp", vsAddr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.Write([]byte("hello\n"))
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "S1 Response\n" {
					t.Fatalf("after mptcp disabled: answer %q, %v", line, err)
				}
				if is, _ := c.(*net.TCPConn).MultipathTCP(); is {
					t.Errorf("after mptcp disabled, the client's connection is still MPTCP")
				}
			})
		}
	}
}
