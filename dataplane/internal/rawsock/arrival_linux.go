package rawsock

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ArrivalCmsgLen is room for the one control message a datagram socket
// with SetArrival on gets: IPV6_PKTINFO, the larger of the two.
const ArrivalCmsgLen = 64

// SetArrival has the kernel tell, with each datagram read on fd with
// recvmsg or recvmmsg, the interface it arrived on (IP_PKTINFO, and
// IPV6_RECVPKTINFO on an IPv6 socket, which takes IPv4 datagrams too),
// for a VLAN list to be checked per datagram; off takes it back.
func SetArrival(fd int, on bool) {
	v := 0
	if on {
		v = 1
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, v)
	if sa, err := unix.Getsockname(fd); err == nil {
		if _, v6 := sa.(*unix.SockaddrInet6); v6 {
			unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, v)
		}
	}
}

// BindDevice binds fd to one interface (SO_BINDTODEVICE), "" unbinding
// it: the kernel then gives the socket only what arrives there.
func BindDevice(fd int, dev string) error { return unix.BindToDevice(fd, dev) }

// PktinfoIf is the arrival interface in the control messages a datagram
// came with (ctl, as long as the kernel filled it), 0 when they do not
// say. It reads the messages in place: a check per datagram allocates
// nothing.
func PktinfoIf(ctl []byte) int {
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(ctl) {
			return 0
		}
		data := ctl[unix.CmsgLen(0):n]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			return int((*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0])).Ifindex)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			return int((*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0])).Ifindex)
		}
		sp := unix.CmsgSpace(n - unix.CmsgLen(0))
		if sp > len(ctl) {
			return 0
		}
		ctl = ctl[sp:]
	}
	return 0
}
