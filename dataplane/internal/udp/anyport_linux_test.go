package udp

import (
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg is one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestOrigDstPort(t *testing.T) {
	pktinfo := cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO, make([]byte, unix.SizeofInet4Pktinfo))
	v4 := cmsg(unix.IPPROTO_IP, unix.IP_ORIGDSTADDR, []byte{2, 0, 0x75, 0x31, 127, 215, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	a6 := netip.MustParseAddr("2001:db8::5").As16()
	v6 := cmsg(unix.IPPROTO_IPV6, unix.IPV6_ORIGDSTADDR, append(append([]byte{10, 0, 0, 53, 0, 0, 0, 0}, a6[:]...), 0, 0, 0, 0))
	mapped := netip.MustParseAddr("::ffff:127.215.0.2").As16()
	v6m := cmsg(unix.IPPROTO_IPV6, unix.IPV6_ORIGDSTADDR, append(append([]byte{10, 0, 0, 80, 0, 0, 0, 0}, mapped[:]...), 0, 0, 0, 0))
	for _, tc := range []struct {
		name string
		ctl  []byte
		want string
	}{
		{"v4", v4, "127.215.0.1:30001"},
		{"after pktinfo", append(append([]byte{}, pktinfo...), v4...), "127.215.0.1:30001"},
		{"v6", v6, "[2001:db8::5]:53"},
		{"v4 on a v6 socket", v6m, "127.215.0.2:80"},
		{"pktinfo only", pktinfo, "invalid AddrPort"},
		{"none", nil, "invalid AddrPort"},
		{"truncated", v4[:unix.SizeofCmsghdr+6], "invalid AddrPort"},
	} {
		if got := origDst(tc.ctl); got.String() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
	if unix.CmsgSpace(unix.SizeofSockaddrInet6) > origDstLen {
		t.Errorf("origDstLen %d is less than a sockaddr_in6's control message (%d)", origDstLen, unix.CmsgSpace(unix.SizeofSockaddrInet6))
	}
	ctl := append(append([]byte{}, pktinfo...), v4...)
	if n := testing.AllocsPerRun(100, func() { origDst(ctl) }); n != 0 {
		t.Errorf("%v allocations per datagram", n)
	}
}
