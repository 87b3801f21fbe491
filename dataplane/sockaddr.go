package dataplane

import (
	"net/netip"
	"syscall"
	"unsafe"
)

// rawSockaddr holds a socket address in the kernel's layout, on the
// caller's stack: the raw connect(2), accept4(2) and getsockname(2)
// calls of both proxy paths use it so that none allocates a Sockaddr.
type rawSockaddr struct {
	any syscall.RawSockaddrAny
}

func (r *rawSockaddr) set(ap netip.AddrPort) (unsafe.Pointer, uint32) {
	a, port := ap.Addr().Unmap(), ap.Port()
	if a.Is4() {
		sa := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&r.any))
		sa.Family = syscall.AF_INET
		sa.Addr = a.As4()
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		return unsafe.Pointer(sa), syscall.SizeofSockaddrInet4
	}
	sa := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&r.any))
	sa.Family = syscall.AF_INET6
	sa.Addr = a.As16()
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	return unsafe.Pointer(sa), syscall.SizeofSockaddrInet6
}

func (r *rawSockaddr) addrPort() netip.AddrPort {
	switch r.any.Addr.Family {
	case syscall.AF_INET:
		sa := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&r.any))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	case syscall.AF_INET6:
		sa := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&r.any))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}
