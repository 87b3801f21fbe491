package gslb

import (
	"net"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux a reader takes up to udpBatch datagrams per recvmmsg and
// sends the batch's answers with one sendmmsg. Both are raw, non-blocking
// system calls made through the socket's RawConn: the runtime is not told
// of them (they return at once) and a reader with nothing to read parks
// in the netpoller instead of blocking in the kernel. A reader blocked in
// a system call would cost, at every quiet moment longer than 20 µs, a
// P handed off by sysmon to a thread woken to spin, and would keep sysmon
// polling every 20 µs; parked, it costs neither.

// udpBatch is how many datagrams one recvmmsg reads and one sendmmsg
// writes at most: what is queued, never waiting for a full batch.
const udpBatch = 32

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
	// The last call's results, for the RawConn functions.
	n     int
	errno unix.Errno
	done  int
}

// recv reads what is queued on fd; false (nothing queued) makes the
// RawConn wait in the netpoller and call it again.
func (b *udpBatcher) recv(fd uintptr) bool {
	for i := range b.in {
		b.in[i].hdr.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		b.in[i].hdr.Flags = 0
	}
	n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.in[0])), udpBatch, unix.MSG_DONTWAIT, 0, 0)
	b.n, b.errno = int(n), e
	return e != unix.EAGAIN
}

// send writes the batch's answers from b.done on; false (the socket's
// send buffer is full) makes the RawConn wait until it can write.
func (b *udpBatcher) send(fd uintptr) bool {
	for b.done < b.nout {
		m, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.out[b.done])), uintptr(b.nout-b.done), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			b.done += int(m)
		case unix.EAGAIN:
			return false
		case unix.EINTR:
		default:
			// The datagram at done could not go (the requester's address
			// unreachable, no buffer): it is dropped, as a lost answer
			// would be.
			b.done++
		}
	}
	return true
}

// serveUDP answers the queries arriving on one socket until it is
// closed, a batch of datagrams per system call each way.
func (s *Server) serveUDP(c *net.UDPConn, k listenerKey) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	b := &udpBatcher{s: s, key: k}
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
	recv, send := b.recv, b.send // bound once: no closure per call
	for {
		if err := rc.Read(recv); err != nil {
			return // closed
		}
		switch b.errno {
		case 0:
		case unix.EINTR:
			continue
		default:
			// An error concerns one datagram (ICMP reports, ENOMEM);
			// pause a little so a persistent one cannot spin.
			time.Sleep(time.Millisecond)
			continue
		}
		b.ctx.now = s.now()
		b.answer(b.n)
		s.flushSeen(&b.ctx)
		if b.nout > 0 {
			b.done = 0
			if err := rc.Write(send); err != nil {
				return
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
