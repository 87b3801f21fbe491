package icmpreject

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// open makes the raw sockets; one that cannot be made stays -1.
func (s *Sender) open() {
	s.fd4, s.fd6 = -1, -1
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_ICMP); err == nil {
		// Send only: a filter that takes nothing keeps the socket's
		// receive queue from filling with every ICMP message the host
		// gets.
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 0)
		unix.SetsockoptInt(fd, unix.SOL_RAW, unix.ICMP_FILTER, -1) // struct icmp_filter: every type blocked
		s.fd4 = fd
	}
	if fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_ICMPV6); err == nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 0)
		block := unix.ICMPv6Filter{}
		for i := range block.Data {
			block.Data[i] = ^uint32(0)
		}
		unix.SetsockoptICMPv6Filter(fd, unix.SOL_ICMPV6, unix.ICMPV6_FILTER, &block)
		s.fd6 = fd
	}
}

// send sends msg to to from the virtual's address from (IP_PKTINFO,
// IPV6_PKTINFO), or from the address the route gives when the kernel
// will not use from (the virtual's address not local: a wildcard or a
// forwarding virtual's).
func send(fd int, msg []byte, to, from netip.Addr) error {
	if to.Is4() {
		sa := &unix.SockaddrInet4{Addr: to.As4()}
		if from.Is4() && !from.IsUnspecified() {
			info := unix.Inet4Pktinfo{Spec_dst: from.As4()}
			if unix.Sendmsg(fd, msg, unix.PktInfo4(&info), sa, 0) == nil {
				return nil
			}
		}
		return unix.Sendto(fd, msg, 0, sa)
	}
	sa := &unix.SockaddrInet6{Addr: to.As16()}
	if from.Is6() && !from.IsUnspecified() {
		info := unix.Inet6Pktinfo{Addr: from.As16()}
		if unix.Sendmsg(fd, msg, unix.PktInfo6(&info), sa, 0) == nil {
			return nil
		}
	}
	return unix.Sendto(fd, msg, 0, sa)
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
