package rules

import (
	"time"

	"golang.org/x/sys/unix"
)

func tcpInfo(fd int) (TCPInfo, error) {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
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
