//go:build linux

package sockopt

import (
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Apply sets s on a TCP socket; a nil s does nothing. Errors are ignored:
// a setting the kernel refuses leaves the socket as it was, and the flow
// goes on (the daemon has already left out the algorithms the kernel
// lacks).
func (s *Side) Apply(fd int) {
	if s == nil {
		return
	}
	if s.Nagle {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 0)
	}
	if s.QuickAck {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
	}
	if s.SendBuffer > 0 {
		setInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, s.SendBuffer)
	}
	if s.RecvBuffer > 0 {
		setInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, s.RecvBuffer)
	}
	if s.Congestion != "" {
		unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, s.Congestion)
	}
	if s.SetTOS {
		setTOS(fd, s.TOS)
	}
}

// ApplyConn is Apply on a connection of the net package.
func (s *Side) ApplyConn(c syscall.Conn) {
	if s == nil {
		return
	}
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { s.Apply(int(fd)) })
	}
}

// Apply marks a socket's packets with t; pass-through does nothing.
func (t TOS) Apply(fd int) {
	if t.Set {
		setTOS(fd, t.Value)
	}
}

// ApplyConn is Apply on a connection of the net package.
func (t TOS) ApplyConn(c syscall.Conn) {
	if !t.Set {
		return
	}
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { t.Apply(int(fd)) })
	}
}

// setTOS sets IP_TOS, and IPV6_TCLASS on an IPv6 socket (which carries
// IPv4-mapped peers with IP_TOS too).
func setTOS(fd int, v uint8) {
	setInt(fd, unix.IPPROTO_IP, unix.IP_TOS, int(v))
	setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, int(v))
}

// setInt is setsockopt(2) of an int without the scheduler's syscall
// bookkeeping (it never blocks; see rawsock.Read) and without allocating.
func setInt(fd, level, opt, v int) {
	x := int32(v)
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&x)), 4, 0)
}

// Available is the congestion controls the kernel has loaded now; nil
// when it cannot tell (then none is left out).
func Available() map[string]bool {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil
	}
	return ParseAvailable(string(b))
}

// Reading is what a socket is set to, for tests and shows: the values the
// kernel reports (SendBuffer and RecvBuffer as SO_SNDBUF and SO_RCVBUF
// give them, twice what was asked).
type Reading struct {
	NoDelay                bool
	SendBuffer, RecvBuffer int
	Congestion             string
	TOS                    int
}

// Read reads a socket's settings back.
func Read(fd int) (Reading, error) {
	var r Reading
	nd, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil {
		return r, err
	}
	r.NoDelay = nd != 0
	r.SendBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	r.RecvBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	cc, _ := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	r.Congestion = strings.TrimRight(cc, "\x00")
	if sa, err := unix.Getsockname(fd); err == nil {
		if _, v6 := sa.(*unix.SockaddrInet6); v6 {
			r.TOS, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS)
			return r, nil
		}
	}
	r.TOS, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS)
	return r, nil
}
