//go:build linux

package dataplane

import (
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// listenSocket finds the plane's listening socket on local among this
// process's descriptors.
func listenSocket(t *testing.T, local netip.AddrPort) int {
	t.Helper()
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
		if acc, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || acc == 0 {
			continue
		}
		if sa, err := unix.Getsockname(fd); err == nil && addrOf(sa) == local {
			return fd
		}
	}
	t.Fatalf("no listener on %s", local)
	return -1
}

// TestTCPSocketSettings reads the keep-alive, MSS, SYN retry,
// FIN-WAIT-2, TTL and DF settings back from the plane's real sockets on
// each engine: the client's accepted socket and the listener take the
// client side (deferred accept, fast open, the MSS the SYN-ACK
// advertises), the member connection the server side, set before its
// SYN (the member sees the MSS it advertised). A commit that drops the
// listener settings takes them back.
func TestTCPSocketSettings(t *testing.T) {
	client := &TCPSide{KeepAlive: 75, MaxSeg: 1200, Linger2: 30, TTL: 17, DF: DFClear, DeferAccept: 10, FastOpen: 1024}
	server := &TCPSide{KeepAlive: 40, MaxSeg: 1000, SynRetries: 2, Linger2: 20, TTL: 33, DF: DFSet}
	i := 0
	for pname, path := range tcpOptsPaths(t) {
		i++
		vsAddr := "127.3.1." + strconv.Itoa(i) + ":8000"
		member := "127.3.2." + strconv.Itoa(i) + ":9000"
		t.Run(pname, func(t *testing.T) {
			srv := startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			v := cfg.Virtuals["/Common/vs"]
			v.ClientTCP, v.ServerTCP = client, server
			path(v)
			mustApply(t, p, cfg)
			c := dialVS(t, vsAddr)
			if got := c.mustAsk("hello"); got != "S1 Response" {
				t.Fatalf("answer %q", got)
			}
			read := func(side string, fd int) sockopt.Reading {
				r, err := sockopt.Read(fd)
				if err != nil {
					t.Fatalf("%s: %v", side, err)
				}
				return r
			}
			cl := netip.MustParseAddrPort(c.c.LocalAddr().String())
			cr := read("client", proxySocket(t, ap(vsAddr), cl))
			if !cr.KeepAlive || cr.KeepIdle != 75 || cr.KeepIntvl != 75 || cr.Linger2 != 30 || cr.TTL != 17 || cr.PMTUDisc != unix.IP_PMTUDISC_DONT {
				t.Errorf("client socket %+v", cr)
			}
			// The test client's MSS is what the SYN-ACK advertised, less
			// the options every segment carries.
			if r := read("test client", fdOfConn(t, c)); r.MaxSeg > 1200 || r.MaxSeg < 1100 {
				t.Errorf("client's MSS %d, want at most the listener's 1200", r.MaxSeg)
			}
			sfd := proxySocket(t, srv.lastRemote(), ap(member))
			sr := read("server", sfd)
			if !sr.KeepAlive || sr.KeepIdle != 40 || sr.SynRetries != 2 || sr.Linger2 != 20 || sr.TTL != 33 || sr.PMTUDisc != unix.IP_PMTUDISC_DO || sr.MaxSeg > 1000 {
				t.Errorf("server socket %+v", sr)
			}
			if r := read("member", proxySocket(t, ap(member), srv.lastRemote())); r.MaxSeg > 1000 || r.MaxSeg < 900 {
				t.Errorf("member's MSS %d, want at most the SYN's 1000", r.MaxSeg)
			}
			lr := read("listener", listenSocket(t, ap(vsAddr)))
			if lr.DeferAccept < 10 || lr.FastOpen != 1024 || lr.MaxSeg != 1200 {
				t.Errorf("listener %+v", lr)
			}
			cfg2 := basic(vsAddr, member)
			path(cfg2.Virtuals["/Common/vs"])
			mustApply(t, p, cfg2)
			if lr := read("listener", listenSocket(t, ap(vsAddr))); lr.DeferAccept != 0 || lr.FastOpen != 0 {
				t.Errorf("listener after the settings were dropped %+v", lr)
			}
		})
	}
}

func fdOfConn(t *testing.T, c *client) (fd int) {
	t.Helper()
	rc, err := c.c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}
