// Package rawsock holds the socket calls the proxy's data paths make
// without the net package: the raw recv(2) and send(2) (read(2) and
// write(2) off Linux), connect(2) and shutdown(2) of the L4 engines, the
// kernel-layout socket address both
// dataplane and dataplane/mblb fill on the stack, and the net.Addr to
// netip conversion. They live once here so that the L4 flows and the
// message-based engine cannot drift apart in how a socket is read,
// written, bound or named.
package rawsock

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// Sockaddr holds a socket address in the kernel's layout, on the caller's
// stack: the raw connect(2), accept4(2) and getsockname(2) calls of both
// proxy paths use it so that none allocates a syscall.Sockaddr.
type Sockaddr struct {
	Any syscall.RawSockaddrAny
}

// Set fills the address with ap and returns the pointer and length a
// system call takes.
func (r *Sockaddr) Set(ap netip.AddrPort) (unsafe.Pointer, uint32) {
	a, port := ap.Addr().Unmap(), ap.Port()
	if a.Is4() {
		sa := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&r.Any))
		sa.Family = syscall.AF_INET
		sa.Addr = a.As4()
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		return unsafe.Pointer(sa), syscall.SizeofSockaddrInet4
	}
	sa := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&r.Any))
	sa.Family = syscall.AF_INET6
	sa.Addr = a.As16()
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	return unsafe.Pointer(sa), syscall.SizeofSockaddrInet6
}

// AddrPort reads the address the kernel wrote (IPv4-mapped addresses
// unmapped); the zero AddrPort for another family.
func (r *Sockaddr) AddrPort() netip.AddrPort {
	switch r.Any.Addr.Family {
	case syscall.AF_INET:
		sa := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&r.Any))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	case syscall.AF_INET6:
		sa := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&r.Any))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}

// AddrPortOf converts a TCP address from the net package, unmapping
// IPv4-mapped addresses so that flows, members and shows compare them
// as configured; the zero AddrPort for anything else.
func AddrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// UnwrapOp strips the net package's "listen tcp a:p:" wrapping so that an
// error names only the cause ("bind: address already in use").
func UnwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// ShutWrite half-closes a socket (a FIN), without the syscall
// bookkeeping for the reason Read gives.
func ShutWrite(fd uintptr) {
	syscall.RawSyscall(syscall.SYS_SHUTDOWN, fd, syscall.SHUT_WR, 0)
}

// ipBindAddressNoPort lets the kernel pick the port at connect time, per
// destination, instead of at bind time (so one source address serves more
// than 28k flows).
const ipBindAddressNoPort = 24

// BindTo binds a socket to src, on src's port when keepPort and the
// kernel allows, else on any port chosen at connect time.
func BindTo(fd int, src netip.AddrPort, keepPort bool) error {
	var sa syscall.Sockaddr
	if src.Addr().Is4() {
		sa = &syscall.SockaddrInet4{Addr: src.Addr().As4()}
	} else {
		sa = &syscall.SockaddrInet6{Addr: src.Addr().As16()}
	}
	if keepPort {
		setPort(sa, int(src.Port()))
		if bindFree(fd, sa) == nil {
			return nil
		}
		setPort(sa, 0)
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	return bindFree(fd, sa)
}

// bindFree binds fd to sa; an IPv6 address no interface holds (an IPv6
// network's, reached through a route of type local) is bound again
// with IPV6_FREEBIND, as IPv4 binds an address of a local route as it
// is. An assigned address costs nothing more; an unassigned one a
// refused bind and a setsockopt.
func bindFree(fd int, sa syscall.Sockaddr) error {
	err := syscall.Bind(fd, sa)
	if err == syscall.EADDRNOTAVAIL {
		if _, v6 := sa.(*syscall.SockaddrInet6); v6 && sockopt.FreeBind(fd) == nil {
			err = syscall.Bind(fd, sa)
		}
	}
	return err
}

// bindExact binds fd to src, its port included, with no fallback. The
// port counts as free when only connections in TIME_WAIT (or others
// bound the same way, to other peers) have it: SO_REUSEADDR; a listener
// or a socket bound plainly still holds it [M].
func bindExact(fd int, src netip.AddrPort, _ bool) error {
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	a := src.Addr().Unmap()
	if a.Is4() {
		return syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(src.Port()), Addr: a.As4()})
	}
	return bindFree(fd, &syscall.SockaddrInet6{Port: int(src.Port()), Addr: a.As16()})
}

// BindExact is bindExact for the sockets the net package dials.
func BindExact(fd int, src netip.AddrPort) error { return bindExact(fd, src, true) }

func setPort(sa syscall.Sockaddr, port int) {
	switch s := sa.(type) {
	case *syscall.SockaddrInet4:
		s.Port = port
	case *syscall.SockaddrInet6:
		s.Port = port
	}
}

// StartConnect issues a non-blocking connect(2) to dst; in progress is not
// an error. A scoped IPv6 address is left to the net package.
func StartConnect(fd uintptr, dst netip.AddrPort) error {
	if dst.Addr().Zone() != "" {
		return nil
	}
	var rsa Sockaddr
	ptr, n := rsa.Set(dst)
	_, _, e := syscall.RawSyscall(syscall.SYS_CONNECT, fd, uintptr(ptr), uintptr(n))
	switch e {
	case 0, syscall.EINPROGRESS, syscall.EINTR:
		return nil
	}
	return e
}

// ListenUDPGroup binds n UDP sockets (at least one) to addr with
// SO_REUSEPORT, so that every CPU's reader has a socket of its own and
// the kernel spreads datagrams over them by flow (a client address and
// port always reach the same socket). The first bind decides: a port
// another socket holds without SO_REUSEPORT refuses it, and the others
// join the first's address, whose port is fixed by then. On an error
// nothing stays bound. The GSLB listeners and the UDP virtuals bind
// their addresses with it; the GSLB's then steer datagrams by CPU
// instead (SteerByCPU).
func ListenUDPGroup(addr string, n int) ([]*net.UDPConn, error) {
	lc := net.ListenConfig{Control: reusePort}
	var cs []*net.UDPConn
	for range max(n, 1) {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			for _, c := range cs {
				c.Close()
			}
			return nil, err
		}
		c := pc.(*net.UDPConn)
		addr = c.LocalAddr().String()
		cs = append(cs, c)
	}
	return cs, nil
}

// reusePort is a net.ListenConfig Control that sets SO_REUSEPORT before
// the bind, and IPV6_FREEBIND on an IPv6 socket (an IPv6 network's
// unassigned address, sockopt.FreeBind6).
func reusePort(network, addr string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	return sockopt.FreeBind6(network, addr, c)
}

// Control runs fn with the descriptor of the socket under c, unwrapping
// TLS and other wrappers that expose theirs with NetConn: iRules read and
// set a flow's socket options through it.
func Control(c net.Conn, fn func(fd int) error) error {
	for {
		switch x := c.(type) {
		case syscall.Conn:
			rc, err := x.SyscallConn()
			if err != nil {
				return err
			}
			var ferr error
			if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
				return err
			}
			return ferr
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return errors.New("the connection is not a socket")
		}
	}
}
