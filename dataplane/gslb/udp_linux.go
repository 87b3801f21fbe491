package gslb

import (
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux a UDP listener's sockets are plain blocking sockets, outside
// the Go netpoller: each reader blocks in recvmmsg as a C server's thread
// would, so an idle socket costs no poller round trip and a busy one
// gets up to udpBatch datagrams per call, answered with one sendmmsg.

// udpBatch is how many datagrams one recvmmsg reads and one sendmmsg
// writes at most. recvmmsg returns once one datagram is there, with what
// else is queued (MSG_WAITFORONE): a batch is never waited for.
const udpBatch = 32

// udpIdle is how long a reader blocks before it looks whether its
// listener is closing (closing also wakes it at once: shutdown).
const udpIdle = 250 * time.Millisecond

// listenUDP binds the listener's sockets with SO_REUSEPORT. The first
// bind decides (a port held by a socket without SO_REUSEPORT refuses
// it); the others join the first's address, whose port is fixed by then.
func (s *Server) listenUDP(k listenerKey) (*dnsListener, error) {
	n := udpSockets()
	l := &dnsListener{key: k, done: make(chan struct{}), sockets: n}
	fds := make([]int, 0, n)
	fail := func(err error) (*dnsListener, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("gtm listener %s udp: %w", k.addr, err)
	}
	addr := k.addr
	for i := 0; i < n; i++ {
		fd, err := udpSocket(addr)
		if err != nil {
			return fail(err)
		}
		fds = append(fds, fd)
		if i == 0 && addr.Port() == 0 {
			sa, err := unix.Getsockname(fd)
			if err != nil {
				return fail(err)
			}
			switch sa := sa.(type) {
			case *unix.SockaddrInet4:
				addr = netip.AddrPortFrom(addr.Addr(), uint16(sa.Port))
			case *unix.SockaddrInet6:
				addr = netip.AddrPortFrom(addr.Addr(), uint16(sa.Port))
			}
		}
	}
	var closing atomic.Bool
	l.stop = func() {
		closing.Store(true)
		for _, fd := range fds {
			unix.Shutdown(fd, unix.SHUT_RDWR) // wakes a reader blocked in recvmmsg
		}
	}
	l.running.Add(n)
	for _, fd := range fds {
		go func() {
			defer l.running.Done()
			s.serveUDP(fd, &closing, k)
		}()
	}
	go func() {
		l.running.Wait()
		for _, fd := range fds {
			unix.Close(fd) // only once no reader can use the number again
		}
		close(l.done)
	}()
	return l, nil
}

// udpSocket opens one blocking UDP socket bound to addr with
// SO_REUSEPORT.
func udpSocket(addr netip.AddrPort) (int, error) {
	family := unix.AF_INET
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}
	if !addr.Addr().Is4() {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	opt := func(level, name, v int) error {
		if err != nil {
			return err
		}
		err = unix.SetsockoptInt(fd, level, name, v)
		return err
	}
	opt(unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if family == unix.AF_INET6 {
		opt(unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err == nil {
		tv := unix.NsecToTimeval(udpIdle.Nanoseconds())
		err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("setsockopt: %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// udpBatcher is one socket reader's state: the headers, addresses and
// buffers of a batch, allocated once.
type udpBatcher struct {
	s     *Server
	fd    int
	key   listenerKey
	ctx   batchCtx
	in    [udpBatch]mmsghdr
	out   [udpBatch]mmsghdr
	inIov [udpBatch]unix.Iovec
	outIo [udpBatch]unix.Iovec
	names [udpBatch]unix.RawSockaddrInet6 // room for either family
	bufs  [udpBatch][]byte
	resp  [udpBatch][]byte // answer buffers, reused
	sent  [udpBatch][]byte // what each out header points at until sent
	nout  int
}

// serveUDP answers the queries arriving on one socket until its listener
// closes, a batch of datagrams per system call each way.
func (s *Server) serveUDP(fd int, closing *atomic.Bool, k listenerKey) {
	b := &udpBatcher{s: s, fd: fd, key: k}
	for i := range b.bufs {
		b.bufs[i] = make([]byte, udpBufSize)
		b.resp[i] = make([]byte, 0, 2048)
		b.inIov[i].Base = &b.bufs[i][0]
		b.inIov[i].SetLen(udpBufSize)
		h := &b.in[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Iov = &b.inIov[i]
		h.SetIovlen(1)
	}
	for !closing.Load() {
		for i := range b.in {
			b.in[i].hdr.Namelen = uint32(unsafe.Sizeof(b.names[i]))
			b.in[i].hdr.Flags = 0
		}
		n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.in[0])), udpBatch, unix.MSG_WAITFORONE, 0, 0)
		switch e {
		case 0:
		case unix.EAGAIN, unix.EINTR:
			continue // idle: look at closing
		default:
			// An error concerns one datagram (ICMP reports, ENOMEM);
			// pause a little so a persistent one cannot spin.
			time.Sleep(time.Millisecond)
			continue
		}
		b.ctx.now = s.now()
		b.answer(int(n))
		s.flushSeen(&b.ctx)
		for done := 0; done < b.nout; {
			m, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.out[done])), uintptr(b.nout-done), 0, 0, 0)
			switch e {
			case 0:
				done += int(m)
			case unix.EINTR:
			default:
				// The datagram at done could not go (the requester's
				// address unreachable, no buffer): it is dropped, as a
				// lost answer would be.
				done++
			}
			if e == unix.EPIPE || closing.Load() {
				break
			}
		}
		for i := range b.sent[:b.nout] {
			b.sent[i] = nil
		}
	}
}

// answer answers the n datagrams just read and lays out the answers to
// send.
func (b *udpBatcher) answer(n int) {
	b.nout = 0
	for i := 0; i < n; i++ {
		h := &b.in[i]
		src, ok := sockaddrAddr(&b.names[i], h.hdr.Namelen)
		if !ok {
			continue
		}
		resp, send := b.s.answerUDP(b.bufs[i][:min(int(h.len), udpBufSize)], src, b.resp[i][:0], b.key, &b.ctx)
		if cap(resp) > cap(b.resp[i]) && cap(resp) <= 64<<10 {
			b.resp[i] = resp[:0]
		}
		if !send || len(resp) == 0 {
			continue
		}
		k := b.nout
		b.sent[k] = resp
		b.outIo[k].Base = &resp[0]
		b.outIo[k].SetLen(len(resp))
		o := &b.out[k].hdr
		o.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		o.Namelen = h.hdr.Namelen
		o.Iov = &b.outIo[k]
		o.SetIovlen(1)
		b.nout++
	}
}

// sockaddrAddr is the address of a sockaddr recvmmsg filled in.
func sockaddrAddr(sa *unix.RawSockaddrInet6, n uint32) (netip.Addr, bool) {
	switch sa.Family {
	case unix.AF_INET:
		if n < uint32(unsafe.Sizeof(unix.RawSockaddrInet4{})) {
			return netip.Addr{}, false
		}
		v4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrFrom4(v4.Addr), true
	case unix.AF_INET6:
		return netip.AddrFrom16(sa.Addr).Unmap(), true
	}
	return netip.Addr{}, false
}
