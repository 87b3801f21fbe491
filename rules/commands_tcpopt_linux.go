package rules

import (
	"errors"
	"net/netip"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tcpDetail reads TCP_INFO as the bytes the kernel wrote, so that a field
// an older kernel does not fill (tcpi_snd_wnd came with Linux 5.19) is
// known to be missing rather than read as 0.
func tcpDetail(fd int) (tcpExtra, error) {
	ti, n, err := readTCPInfo(fd)
	if err != nil {
		return tcpExtra{}, err
	}
	// tcpi_snd_wscale and tcpi_rcv_wscale are 4-bit fields sharing the
	// byte after tcpi_options, which x/sys/unix leaves as padding.
	ws := (*[8]byte)(unsafe.Pointer(&ti))[6]
	x := tcpExtra{
		MSS: int64(ti.Snd_mss), Cwnd: int64(ti.Snd_cwnd), RTTMicros: int64(ti.Rtt),
		Ssthresh:  int64(ti.Snd_ssthresh),
		PeerScale: int64(ws & 0x0f), OwnScale: int64(ws >> 4),
		SndWnd: -1,
	}
	if uintptr(n) >= unsafe.Offsetof(ti.Snd_wnd)+unsafe.Sizeof(ti.Snd_wnd) {
		x.SndWnd = int64(ti.Snd_wnd)
	}
	return x, nil
}

func getKeepalive(fd int) (int, error) {
	on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	if err != nil || on == 0 {
		return 0, err
	}
	return unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
}

// setKeepalive turns keep-alives off (0) or sends them after secs idle
// and every secs after that: BIG-IP's keep-alive interval is one figure,
// Linux's first probe and later probes are two.
func setKeepalive(fd, secs int) error {
	if secs == 0 {
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
}

func getCongestion(fd int) (string, error) {
	s, err := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	return strings.TrimRight(s, "\x00"), err
}

func setCongestion(fd int, name string) error {
	err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return errors.New("the kernel has no " + name + " congestion control (its module is not loaded)")
	case errors.Is(err, unix.EPERM):
		return errors.New("the kernel does not let this process use " + name + " (net.ipv4.tcp_allowed_congestion_control)")
	}
	return err
}

// setQuickAck sets TCP_QUICKACK: on acknowledges every segment at once
// (delayed ACKs disabled), off returns to delayed ACKs.
func setQuickAck(fd int, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, v)
}

func bufOpt(send bool) int {
	if send {
		return unix.SO_SNDBUF
	}
	return unix.SO_RCVBUF
}

// getBuf is the buffer size a rule set or Linux chose, in the rule's
// terms: Linux reports twice what was asked (it counts its bookkeeping).
func getBuf(fd int, send bool) (int, error) {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, bufOpt(send))
	return v / 2, err
}

func setBuf(fd int, send bool, n int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, bufOpt(send), n)
}

func getWindowClamp(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_WINDOW_CLAMP)
}

func getNoDelay(fd int) (bool, error) {
	v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	return v != 0, err
}

// noPacingCap is SO_MAX_PACING_RATE's "no limit", which also leaves a
// socket unpaced unless something else (BBR, an fq qdisc) paces it.
const noPacingCap = ^uint64(0)

// pacedUncapped asks Linux to pace the socket (TCP's internal pacing at
// its computed rate) without capping that rate: any value but
// noPacingCap turns pacing on.
const pacedUncapped = noPacingCap - 1

func getPacing(fd int) (bool, error) {
	v, err := getsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE)
	if err != nil {
		return false, err
	}
	if v != noPacingCap {
		return true, nil
	}
	cc, err := getCongestion(fd)
	return cc == "bbr", err
}

var errPacingStays = errors.New("Linux cannot stop pacing a socket it was asked to pace")

func setPacing(fd int, on bool) error {
	v, err := getsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE)
	if err != nil {
		return err
	}
	switch {
	case on && v == noPacingCap:
		return setsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, pacedUncapped)
	case !on && v != noPacingCap:
		return errPacingStays
	case !on:
		if cc, err := getCongestion(fd); err != nil || cc == "bbr" {
			if err == nil {
				err = errors.New("the socket's congestion control (bbr) paces it")
			}
			return err
		}
	}
	return nil
}

func getsockoptUint64(fd, level, opt int) (uint64, error) {
	var v uint64
	n := uint32(unsafe.Sizeof(v))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return 0, e
	}
	if n == 4 {
		// A 32-bit value (the kernel's unsigned long on 32-bit systems).
		return uint64(*(*uint32)(unsafe.Pointer(&v))), nil
	}
	return v, nil
}

func setsockoptUint64(fd, level, opt int, v uint64) error {
	_, _, e := syscall.Syscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0)
	if e != 0 {
		return e
	}
	return nil
}

// unusedPortOf is the first port from hint (the kernel's choice when hint
// is 0) that a TCP socket (a UDP one, udp) can bind on local, tried at most tries times;
// 0 when none. A port bind accepts is held by no socket on that address,
// whatever its peer, so it is unused for every tuple with local. The
// socket is closed at once: the answer is a moment's truth, as BIG-IP's
// is until the rule uses it. IP_FREEBIND lets a SNAT address the host
// does not hold be checked too.
func unusedPortOf(local netip.Addr, hint, tries int, udp bool) (int, error) {
	local = local.Unmap()
	typ := unix.SOCK_STREAM
	if udp {
		typ = unix.SOCK_DGRAM
	}
	family := unix.AF_INET
	if local.Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if family == unix.AF_INET {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_FREEBIND, 1)
	} else {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_FREEBIND, 1)
	}
	sa := func(port int) unix.Sockaddr {
		if family == unix.AF_INET {
			return &unix.SockaddrInet4{Port: port, Addr: local.As4()}
		}
		return &unix.SockaddrInet6{Port: port, Addr: local.As16()}
	}
	if hint == 0 {
		if err := unix.Bind(fd, sa(0)); err != nil {
			return 0, nil
		}
		got, err := unix.Getsockname(fd)
		if err != nil {
			return 0, err
		}
		switch a := got.(type) {
		case *unix.SockaddrInet4:
			return a.Port, nil
		case *unix.SockaddrInet6:
			return a.Port, nil
		}
		return 0, nil
	}
	for p := hint; p <= 65535 && p < hint+tries; p++ {
		err := unix.Bind(fd, sa(p))
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, unix.EADDRINUSE) && !errors.Is(err, unix.EACCES) {
			return 0, nil
		}
	}
	return 0, nil
}

func systemUptime() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, err
	}
	return int64(si.Uptime), nil
}

func getPriority(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PRIORITY)
}

func setPriority(fd, n int) error {
	err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PRIORITY, n)
	if errors.Is(err, unix.EPERM) {
		return errors.New("priority 7 needs CAP_NET_ADMIN (Linux lets other processes use 0 to 6)")
	}
	return err
}

func getNotSentLowat(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
}

func setNotSentLowat(fd, n int) error {
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, n)
}

// unsentBytes is how many bytes wait in the socket's send queue not yet
// sent (SIOCOUTQNSD): BIG-IP's proxy buffer, the data held before it goes
// out, as against the send buffer of data sent and not yet acknowledged.
func unsentBytes(fd int) (int, error) {
	return unix.IoctlGetInt(fd, unix.SIOCOUTQNSD)
}

// routeMTU is the path MTU the kernel knows towards dst: a UDP socket
// connected to it (no datagram is sent) reads IP_MTU or IPV6_MTU.
func routeMTU(dst netip.AddrPort) (int, error) {
	a := dst.Addr().Unmap()
	family, level, opt := unix.AF_INET, unix.IPPROTO_IP, unix.IP_MTU
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: a.As4()}
	if a.Is6() {
		family, level, opt = unix.AF_INET6, unix.IPPROTO_IPV6, unix.IPV6_MTU
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: a.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return 0, err
	}
	return unix.GetsockoptInt(fd, level, opt)
}
