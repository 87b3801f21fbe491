package gslb

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A dns_dot probe reads the hops its reply crossed from the TTL it
// arrived with: a responder on loopback sending with TTL 64, 60 or 120
// is 0, 4 or 8 hops away.
func TestProbeHops(t *testing.T) {
	for _, c := range []struct {
		ttl, hops int
	}{{64, 0}, {60, 4}, {120, 8}} {
		srv, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.16.3.53:0")))
		if err != nil {
			t.Skipf("cannot listen on 127.16.3.53: %v", err)
		}
		rc, _ := srv.SyscallConn()
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TTL, c.ttl) })
		go func() {
			buf := make([]byte, 512)
			n, from, err := srv.ReadFromUDPAddrPort(buf)
			if err == nil {
				buf[2] |= 0x80 // a response, same ID
				srv.WriteToUDPAddrPort(buf[:n], from)
			}
		}()
		ap := srv.LocalAddr().(*net.UDPAddr).AddrPort()
		_, proto, hops, err := measureHops(context.Background(), netip.MustParseAddr("127.16.3.1"), ap.Addr(), ap.Port(), 2*time.Second, []string{"dns_dot"})
		srv.Close()
		if err != nil || proto != "dns_dot" || hops != c.hops {
			t.Errorf("reply TTL %d: hops %d (%s, %v), want %d", c.ttl, hops, proto, err, c.hops)
		}
	}
}
