package rules

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readTCPInfo is getsockopt(TCP_INFO) with the length the kernel wrote,
// which tells the fields an older kernel leaves out (tcpDetail).
func readTCPInfo(fd int) (ti unix.TCPInfo, n uint32, err error) {
	n = uint32(unsafe.Sizeof(ti))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&ti)), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return ti, 0, e
	}
	return ti, n, nil
}

func tcpInfo(fd int) (TCPInfo, error) {
	ti, _, err := readTCPInfo(fd)
	if err != nil {
		return TCPInfo{}, err
	}
	return TCPInfo{
		RTT:    time.Duration(ti.Rtt) * time.Microsecond,
		RTTVar: time.Duration(ti.Rttvar) * time.Microsecond,
		RTO:    time.Duration(ti.Rto) * time.Microsecond,
		MSS:    int(ti.Snd_mss),
		Cwnd:   int(ti.Snd_cwnd),
	}, nil
}

func setNoDelay(fd int, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v)
}

// setTOS sets both the IPv4 ToS and, on an IPv6 socket, its traffic
// class: the socket's family decides which one the kernel uses.
func setTOS(fd, v int) error {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	if _, v6 := sa.(*unix.SockaddrInet6); v6 {
		return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, v)
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS, v)
}
