package gslb

import (
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// udpBatch is how many datagrams one recvmmsg reads and one sendmmsg
// writes at most. recvmmsg returns what is queued (at least one): a batch
// is never waited for.
const udpBatch = 32

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// udpBatcher is one socket reader's state: the headers, addresses and
// buffers of a batch, allocated once, and the read and write functions
// handed to the socket's RawConn (made once: a closure per call would be
// an allocation per batch).
type udpBatcher struct {
	s     *Server
	rc    syscall.RawConn
	in    [udpBatch]mmsghdr
	out   [udpBatch]mmsghdr
	inIov [udpBatch]unix.Iovec
	outIo [udpBatch]unix.Iovec
	names [udpBatch]unix.RawSockaddrInet6 // room for either family
	bufs  [udpBatch][]byte
	resp  [udpBatch][]byte // answer buffers, reused
	sent  [udpBatch][]byte // what each out header points at until sent

	n, nout, done int
	errno         syscall.Errno
	readFn        func(fd uintptr) bool
	writeFn       func(fd uintptr) bool
}

// serveUDP answers the queries arriving on one socket until it is closed,
// a batch of datagrams per system call each way.
func (s *Server) serveUDP(c *net.UDPConn) {
	rc, err := c.SyscallConn()
	if err != nil {
		s.log.Warn("gslb: udp listener", "error", err)
		return
	}
	b := &udpBatcher{s: s, rc: rc}
	for i := range b.bufs {
		b.bufs[i] = make([]byte, udpBufSize)
		b.resp[i] = make([]byte, 0, 2048)
	}
	b.readFn, b.writeFn = b.recv, b.send
	for {
		for i := range b.in {
			b.inIov[i].Base = &b.bufs[i][0]
			b.inIov[i].SetLen(udpBufSize)
			h := &b.in[i].hdr
			h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
			h.Namelen = uint32(unsafe.Sizeof(b.names[i]))
			h.Iov = &b.inIov[i]
			h.SetIovlen(1)
		}
		if err := rc.Read(b.readFn); err != nil {
			return // closed
		}
		if b.errno != 0 {
			// An error concerns one datagram (ICMP reports, ENOMEM);
			// pause a little so a persistent one cannot spin.
			time.Sleep(time.Millisecond)
			continue
		}
		b.answer()
		if b.nout > 0 {
			b.done = 0
			for b.done < b.nout {
				if err := rc.Write(b.writeFn); err != nil {
					return
				}
				if b.errno != 0 {
					// The datagram at b.done could not go (the
					// requester's address unreachable, a full buffer):
					// it is dropped, as a lost answer would be.
					b.done++
				}
			}
		}
		for i := range b.sent {
			b.sent[i] = nil
		}
	}
}

func (b *udpBatcher) recv(fd uintptr) bool {
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.in[0])), udpBatch, unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false
	}
	b.n, b.errno = int(n), e
	return true
}

func (b *udpBatcher) send(fd uintptr) bool {
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.out[b.done])), uintptr(b.nout-b.done), unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false
	}
	b.errno = e
	if e == 0 {
		b.done += int(n)
	}
	return true
}

// answer answers the batch just read and lays out the answers to send.
func (b *udpBatcher) answer() {
	b.nout = 0
	for i := 0; i < b.n; i++ {
		h := &b.in[i]
		src, ok := sockaddrAddr(&b.names[i], h.hdr.Namelen)
		if !ok {
			continue
		}
		n := min(int(h.len), udpBufSize)
		resp, send := b.s.answerUDP(b.bufs[i][:n], src, b.resp[i][:0])
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
