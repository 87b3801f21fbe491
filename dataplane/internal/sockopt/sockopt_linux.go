//go:build linux

package sockopt

import (
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/synhdr"
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
	if s.SetPriority {
		setInt(fd, unix.SOL_SOCKET, unix.SO_PRIORITY, s.Priority)
	}
	s.applyMore(fd)
}

// applyMore sets what the tcp profile's timers, keep-alives and IP
// header settings ask (Apply's second half, kept apart for its length).
func (s *Side) applyMore(fd int) {
	switch {
	case s.KeepAlive > 0:
		setInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, s.KeepAlive)
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, s.KeepAlive)
	case s.KeepAliveOff:
		setInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	if s.MaxSeg > 0 {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG, s.MaxSeg)
	}
	if s.SynRetries > 0 {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_SYNCNT, s.SynRetries)
	}
	if s.Linger2 > 0 {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_LINGER2, s.Linger2)
	}
	if s.TTL > 0 {
		setInt(fd, unix.IPPROTO_IP, unix.IP_TTL, int(s.TTL))
	}
	if s.TTL6 > 0 {
		setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, int(s.TTL6))
	}
	if s.NoChecksum {
		setInt(fd, unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
	}
	if s.NoLinger {
		l := unix.Linger{Onoff: 1}
		unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &l)
	}
	if s.NotSentLowat > 0 {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, s.NotSentLowat)
	}
	if s.PacingRate > 0 {
		setInt(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, s.PacingRate)
	}
	if s.UserTimeout > 0 {
		setInt(fd, unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(s.UserTimeout/time.Millisecond))
	}
	switch s.DF {
	case DFSet:
		setInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
		setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO)
	case DFClear:
		setInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DONT)
		setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DONT)
	}
}

// LowWait moves fd's writer wake-up to proxy-buffer-low while a flow
// waits on it: Linux wakes at half of TCP_NOTSENT_LOWAT, and setting it
// wakes the writer at once when the queue is already that short.
func (s *Side) LowWait(fd int) {
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, 2*s.NotSentLow)
}

// LowResume gives fd back its proxy-buffer-high (0: the system's) once the
// flow was woken.
func (s *Side) LowResume(fd int) {
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, s.NotSentLowat)
}

// ApplyDatagram sets a UDP virtual's listening socket as its client
// side says, taking back what s leaves unset (ToS 0, the system's TTL,
// path MTU discovery, checksums), since the socket outlives commits; a
// nil s takes everything back. The send buffer is the caller's (it has
// its own size for the socket).
func ApplyDatagram(fd int, s *Side) {
	var v Side
	if s != nil {
		v = *s
	}
	setTOS(fd, v.TOS)
	ttl, ttl6 := -1, -1
	if v.TTL > 0 {
		ttl = int(v.TTL)
	}
	if v.TTL6 > 0 {
		ttl6 = int(v.TTL6)
	}
	setInt(fd, unix.IPPROTO_IP, unix.IP_TTL, ttl)
	setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl6)
	df, df6 := unix.IP_PMTUDISC_WANT, unix.IPV6_PMTUDISC_WANT
	switch v.DF {
	case DFSet:
		df, df6 = unix.IP_PMTUDISC_DO, unix.IPV6_PMTUDISC_DO
	case DFClear:
		df, df6 = unix.IP_PMTUDISC_DONT, unix.IPV6_PMTUDISC_DONT
	}
	setInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, df)
	setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, df6)
	nc := 0
	if v.NoChecksum {
		nc = 1
	}
	setInt(fd, unix.SOL_SOCKET, unix.SO_NO_CHECK, nc)
}

// ApplyListener sets a listening socket's deferred accept, fast open
// queue, advertised MSS, interface binding and arrival keeping; zero values take back an earlier setting, so
// a commit that drops them leaves the listener as the kernel made it.
func (l Listener) ApplyListener(fd int) {
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, l.DeferAccept)
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN, l.FastOpen)
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG, l.MaxSeg)
	synhdr.SetSave(fd, l.SaveSYN)
	unix.BindToDevice(fd, l.Device)
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return
	}
	arrival := 0
	if l.Arrival {
		arrival = 1
	}
	if _, v6 := sa.(*unix.SockaddrInet6); v6 {
		setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, arrival)
		// A dual-stack listener meets IPv4 clients as IPv4-mapped
		// addresses: a key for those too.
		setMD5(fd, netip.IPv6Unspecified(), 0, l.MD5Key)
		setMD5(fd, netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff}), 96, l.MD5Key)
		return
	}
	setInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, arrival)
	setMD5(fd, netip.IPv4Unspecified(), 0, l.MD5Key)
}

// ApplyPeer sets what a socket needs to know its peer for, before the
// connect: the MD5 signature key for peer. A nil s does nothing.
func (s *Side) ApplyPeer(fd int, peer netip.Addr) {
	if s == nil || s.MD5Key == "" {
		return
	}
	peer = peer.Unmap()
	if sa, err := unix.Getsockname(fd); err == nil {
		if _, v6 := sa.(*unix.SockaddrInet6); v6 && peer.Is4() {
			peer = netip.AddrFrom16(peer.As16())
		}
	}
	setMD5(fd, peer, peer.BitLen(), s.MD5Key)
}

// setMD5 sets (key not empty) or deletes the RFC 2385 key of the peers
// in prefix/bits on fd (TCP_MD5SIG_EXT). Deleting a key that is not there
// fails quietly, which is what a commit that never had one wants.
func setMD5(fd int, prefix netip.Addr, bits int, key string) {
	var m unix.TCPMD5Sig
	if prefix.Is4() {
		m.Addr.Family = unix.AF_INET
		a := prefix.As4()
		for i, b := range a {
			m.Addr.Data[2+i] = b
		}
	} else {
		m.Addr.Family = unix.AF_INET6
		a := prefix.As16()
		for i, b := range a {
			m.Addr.Data[6+i] = b
		}
	}
	m.Flags = unix.TCP_MD5SIG_FLAG_PREFIX
	m.Prefixlen = uint8(bits)
	m.Keylen = uint16(copy(m.Key[:], key))
	unix.SetsockoptTCPMD5Sig(fd, unix.IPPROTO_TCP, unix.TCP_MD5SIG_EXT, &m)
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
	// KeepAlive is SO_KEEPALIVE; KeepIdle and KeepIntvl its timers.
	KeepAlive           bool
	KeepIdle, KeepIntvl int
	// MaxSeg is TCP_MAXSEG: the MSS in use once connected (less the
	// options every segment carries), user_mss before.
	MaxSeg      int
	SynRetries  int // TCP_SYNCNT
	Linger2     int // TCP_LINGER2 in seconds
	TTL         int // IP_TTL, or IPV6_UNICAST_HOPS on an IPv6 socket
	PMTUDisc    int // IP_MTU_DISCOVER, or IPV6_MTU_DISCOVER
	DeferAccept int // TCP_DEFER_ACCEPT in seconds (rounded up to a SYN-ACK retransmission)
	FastOpen    int // TCP_FASTOPEN's queue
	NoChecksum  bool
	// NoLinger is SO_LINGER on with a time of 0; UserTimeout is
	// TCP_USER_TIMEOUT in milliseconds.
	NoLinger    bool
	UserTimeout int
	// NotSentLowat is TCP_NOTSENT_LOWAT (a large number when unset).
	NotSentLowat int
	// PacingRate is SO_MAX_PACING_RATE in bytes per second (all ones
	// when unbounded).
	PacingRate uint64
	// MPTCP: the socket is Multipath TCP (SO_PROTOCOL IPPROTO_MPTCP).
	MPTCP bool
}

// Read reads a socket's settings back.
func Read(fd int) (Reading, error) {
	var r Reading
	if _, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		return r, err
	}
	nd, _ := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	r.NoDelay = nd != 0
	r.SendBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	r.RecvBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	cc, _ := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	r.Congestion = strings.TrimRight(cc, "\x00")
	nc, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NO_CHECK)
	r.NoChecksum = nc != 0
	ka, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	r.KeepAlive = ka != 0
	r.KeepIdle, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
	r.KeepIntvl, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
	r.MaxSeg, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG)
	r.SynRetries, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_SYNCNT)
	r.Linger2, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_LINGER2)
	r.DeferAccept, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT)
	r.FastOpen, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN)
	if l, err := unix.GetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER); err == nil {
		r.NoLinger = l.Onoff != 0 && l.Linger == 0
	}
	r.UserTimeout, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	r.NotSentLowat, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
	if pr, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE); err == nil {
		r.PacingRate = pr
	}
	proto, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	r.MPTCP = proto == unix.IPPROTO_MPTCP
	if sa, err := unix.Getsockname(fd); err == nil {
		if _, v6 := sa.(*unix.SockaddrInet6); v6 {
			r.TOS, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS)
			r.TTL, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS)
			r.PMTUDisc, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER)
			return r, nil
		}
	}
	r.TOS, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS)
	r.TTL, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TTL)
	r.PMTUDisc, _ = unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER)
	return r, nil
}
