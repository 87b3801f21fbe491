//go:build linux

package rawsock

import (
	"net"
	"net/netip"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// Events is what a proxied socket is registered for in its event loop,
// once: edges of readability, writability and the peer's FIN.
const Events = evloop.In | evloop.Out | evloop.RdHup | evloop.Edge

// Read and Write are recv(2) and send(2) on a non-blocking socket
// without the scheduler's syscall bookkeeping: they never block, and
// entering the syscall state for them let the runtime's monitor hand the
// processor to another thread whenever the call was slowed by delivering
// to a local peer, waking threads for nothing. The socket calls rather
// than read(2)/write(2): those go through the file layer first (position
// lock, permission and notification hooks), 5-10 % of a small message's
// round trip on loopback.
func Read(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Write is send(2) with MSG_NOSIGNAL (a peer gone is EPIPE, not a
// signal); see Read.
func Write(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Sockname is a socket's local address, without allocating.
func Sockname(fd int) netip.AddrPort {
	var rsa Sockaddr
	n := uint32(syscall.SizeofSockaddrAny)
	_, _, e := unix.RawSyscall(unix.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&rsa.Any)),
		uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return netip.AddrPort{}
	}
	return rsa.AddrPort()
}

// Accept4 accepts one connection and returns the client's address
// without allocating.
func Accept4(lfd, flags int) (int, netip.AddrPort, syscall.Errno) {
	var rsa Sockaddr
	n := uint32(syscall.SizeofSockaddrAny)
	r, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(&rsa.Any)),
		uintptr(unsafe.Pointer(&n)), uintptr(flags), 0, 0)
	if e != 0 {
		return -1, netip.AddrPort{}, e
	}
	return int(r), rsa.AddrPort(), 0
}

// Reset closes a socket with a TCP reset.
func Reset(fd int) {
	l := unix.Linger{Onoff: 1, Linger: 0}
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_LINGER,
		uintptr(unsafe.Pointer(&l)), unsafe.Sizeof(l), 0)
	Close(fd)
}

// Close closes a socket of an event loop. It is a raw system call: close(2)
// of a non-blocking socket does not wait (without a linger time), and the
// runtime's own path (entersyscall) wakes its monitor thread whenever that
// sleeps, a futex wake and a thread switch per connection on a quiet
// process.
func Close(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// SetNoDelay turns Nagle's algorithm off: the proxy writes what it has
// read, and holding a small write back only adds latency.
func SetNoDelay(fd int) {
	one := int32(1)
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY,
		uintptr(unsafe.Pointer(&one)), 4, 0)
}

// WriteAll writes b to a non-blocking socket until done or full; it
// returns how much went out.
func WriteAll(fd int, b []byte) (int, error) {
	w := 0
	for w < len(b) {
		k, err := Write(fd, b[w:])
		switch err {
		case nil:
			w += k
		case syscall.EINTR:
		case syscall.EAGAIN:
			return w, nil
		default:
			return w, err
		}
	}
	return w, nil
}

// Splice moves up to n bytes between descriptors (one of them a pipe)
// without copying them through user space.
func Splice(from, to, n int) (int, syscall.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(from), 0, uintptr(to), 0, uintptr(n),
		unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	return int(r), e
}

// Listen opens a non-blocking listening socket on ap, a Multipath TCP one
// when mptcp is true and the kernel has it (else plain TCP: clients
// without MPTCP are served alike). Errors read like the net package's
// ("bind: address already in use").
func Listen(ap netip.AddrPort, mptcp bool) (int, error) {
	family := unix.AF_INET
	if !ap.Addr().Unmap().Is4() {
		family = unix.AF_INET6
	}
	fd, err := streamSocket(family, mptcp)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sockopt.FreeBind(fd) // an IPv6 network's unassigned address (bindFree)
	}
	if err := unix.Bind(fd, toSockaddr(ap)); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("listen", err)
	}
	return fd, nil
}

func toSockaddr(ap netip.AddrPort) unix.Sockaddr {
	a := ap.Addr().Unmap()
	if a.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
}

// Dial opens a non-blocking socket to dst from src (invalid: the kernel's
// choice), keeping src's port when it is not 0 and the kernel allows.
// done is true when the connect completed at once (a server on this
// host); local is the source when it is known without asking the kernel.
func Dial(src, dst netip.AddrPort) (fd int, done bool, local netip.AddrPort, errno syscall.Errno) {
	return DialSide(src, dst, nil)
}

// DialSide is Dial with a tcp profile's side set on the socket before its
// SYN leaves: the MSS it advertises, its SYN retries and its receive
// buffer (the window scale) are fixed by then. A nil side costs a
// comparison.
func DialSide(src, dst netip.AddrPort, side *sockopt.Side) (fd int, done bool, local netip.AddrPort, errno syscall.Errno) {
	keep := src.IsValid() && src.Port() != 0
	if !keep && src.IsValid() && kernelSource(dst.Addr()) == src.Addr() {
		src = netip.AddrPort{} // binding would change nothing
	}
	for {
		fd, done, errno = dialOnce(src, dst, keep, false, side)
		if errno != 0 && keep && (errno == syscall.EADDRNOTAVAIL || errno == syscall.EADDRINUSE) {
			keep = false
			continue
		}
		if errno == 0 && keep {
			local = src
		}
		return fd, done, local, errno
	}
}

// DialSideExact is DialSide from exactly src, its port included, with
// no fallback to another port: EADDRINUSE when the port is taken
// (source-port preserve-strict).
func DialSideExact(src, dst netip.AddrPort, side *sockopt.Side) (fd int, done bool, errno syscall.Errno) {
	return dialOnce(src, dst, true, true, side)
}

var (
	loopback4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	loopback6 = netip.IPv6Loopback()
)

// kernelSource is the source address the kernel gives a connection to dst
// without a bind, where that is certain: 127.0.0.1 towards 127.0.0.0/8
// (the local route's source) and ::1 towards ::1.
func kernelSource(dst netip.Addr) netip.Addr {
	dst = dst.Unmap()
	switch {
	case dst.Is4() && dst.IsLoopback():
		return loopback4
	case dst == loopback6:
		return loopback6
	}
	return netip.Addr{}
}

// dialOnce dials dst from src; keepPort binds src's port when free,
// exact only (no other port).
func dialOnce(src, dst netip.AddrPort, keepPort, exact bool, side *sockopt.Side) (int, bool, syscall.Errno) {
	family := unix.AF_INET
	if !dst.Addr().Unmap().Is4() {
		family = unix.AF_INET6
	}
	fd, err := streamSocket(family, side != nil && side.MPTCP)
	if err != nil {
		return -1, false, errnoOf(err)
	}
	SetNoDelay(fd)
	if side != nil {
		side.Apply(fd)
		side.ApplyPeer(fd, dst.Addr())
	}
	if src.IsValid() {
		bind := BindTo
		if exact {
			bind = bindExact
		}
		if err := bind(fd, src, keepPort); err != nil {
			Close(fd)
			return -1, false, errnoOf(err)
		}
	}
	var rsa Sockaddr
	ptr, n := rsa.Set(dst)
	_, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(ptr), uintptr(n))
	if e == unix.EINPROGRESS {
		// Registering the socket tells when it is done: to a server on this
		// host at once, in the same round of events.
		return fd, false, 0
	}
	if e != 0 {
		Close(fd)
		return -1, false, e
	}
	return fd, true, 0
}

// streamSocket is a non-blocking TCP socket, Multipath TCP when mptcp is
// true and the kernel allows it (built with it, net.mptcp.enabled 1):
// otherwise plain TCP, as Go's net package falls back.
func streamSocket(family int, mptcp bool) (int, error) {
	if mptcp {
		if fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP); err == nil {
			return fd, nil
		}
	}
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EINVAL
}

// Classic BPF ancillary data (linux/filter.h): a load from skfAdOff +
// skfAdCPU reads the number of the CPU running the program. skfAdOff is
// SKF_AD_OFF, -0x1000, as the uint32 the instruction holds.
const (
	skfAdOff = 0xfffff000
	skfAdCPU = 36
)

// SteerByCPU makes the kernel give each datagram for the reuse-port group
// of conns to the socket whose index is the receiving CPU's number modulo
// n, the first n sockets of the group (n of 1 or less: every datagram to
// the first), instead of hashing the sender's address and port
// (ListenUDPGroup's default), for datagrams that carry no state between
// them (the GSLB's DNS queries; not a UDP virtual's flows, which must
// keep to one socket). Called again, it replaces the group's program, so
// a server can keep its other sockets quiet while one reader keeps up.
// Why by CPU: with a hash, a few busy senders can land on one socket
// while another reader idles (four dnsperf sockets on two readers: 4:0
// one time in eight, 3:1 one in two), and a datagram received on one CPU
// wakes a reader that may sleep on the other. Steered by CPU, the
// datagrams received on a CPU (the NIC queue's CPU, on loopback the
// sender's) go to one reader, and one sender's queries still meet in
// that reader's batches, where UDP GSO groups the answers. A random
// choice instead (SKF_AD_RANDOM) split those batches and cost more than
// it spread (dataplane/gslb/README.md, Figures). The catch: a host that
// receives every packet on one CPU (one NIC queue, no RPS) sends every
// datagram to one socket.
func SteerByCPU(conns []*net.UDPConn, n int) error {
	if len(conns) < 2 {
		return nil
	}
	rc, err := conns[0].SyscallConn()
	if err != nil {
		return err
	}
	n = min(max(n, 1), len(conns))
	prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	if n > 1 {
		prog = []unix.SockFilter{
			{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: uint32(skfAdOff + skfAdCPU)},
			{Code: unix.BPF_ALU | unix.BPF_MOD | unix.BPF_K, K: uint32(n)},
			{Code: unix.BPF_RET | unix.BPF_A},
		}
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &fp)
	}); err != nil {
		return err
	}
	return serr
}

// ArrivalIf is the index of the interface an accepted connection's SYN
// arrived on, kept by a listener with IP_PKTINFO (IPV6_RECVPKTINFO) set
// (sockopt.Listener.Arrival); 0 when the kernel does not tell. It is
// asked only for virtuals with a VLAN list.
func ArrivalIf(fd int) int {
	var buf [64]byte
	n := uint32(len(buf))
	level, opt := unix.IPPROTO_IP, unix.IP_PKTOPTIONS
	if sa, err := unix.Getsockname(fd); err == nil {
		if _, v6 := sa.(*unix.SockaddrInet6); v6 {
			level, opt = unix.IPPROTO_IPV6, unix.IPV6_2292PKTOPTIONS
		}
	}
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return 0
	}
	msgs, err := unix.ParseSocketControlMessage(buf[:n])
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_PKTINFO && len(m.Data) >= unix.SizeofInet4Pktinfo:
			return int((*unix.Inet4Pktinfo)(unsafe.Pointer(&m.Data[0])).Ifindex)
		case m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_PKTINFO && len(m.Data) >= unix.SizeofInet6Pktinfo:
			return int((*unix.Inet6Pktinfo)(unsafe.Pointer(&m.Data[0])).Ifindex)
		}
	}
	return 0
}
