package udp

import (
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// The kernel's address layout, both ways, for sockets of either family.
func TestSockaddrRoundTrip(t *testing.T) {
	for _, c := range []struct{ addr, local string }{
		{"127.0.0.9:40001", "127.0.0.1:53"},
		{"127.0.0.9:1", "127.0.0.1:53"},
		{"[::1]:65535", "[::1]:53"},
		{"127.0.0.9:5300", "[::1]:53"}, // v4 client on a v6 socket: mapped
	} {
		var sa unix.RawSockaddrInet6
		a, local := netip.MustParseAddrPort(c.addr), netip.MustParseAddrPort(c.local)
		n := sockaddr(&sa, a, local)
		wantLen := uint32(unix.SizeofSockaddrInet6)
		if local.Addr().Is4() {
			wantLen = unix.SizeofSockaddrInet4
		}
		if n != wantLen {
			t.Errorf("%s: length %d, want %d", c.addr, n, wantLen)
		}
		if got := addrOf(&sa); got != a {
			t.Errorf("%s on %s: read back %s", c.addr, c.local, got)
		}
	}
}
