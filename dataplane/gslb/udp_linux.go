package gslb

import (
	"net"
	"net/netip"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
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
//
// Answers of one batch to one requester (address and port), of one
// length and in a row, go as one message with UDP_SEGMENT (UDP GSO,
// Linux 4.18): the kernel builds, routes and hands them to the device
// once and cuts them into one datagram per answer at the end, so the
// requester sees no difference. A client that sends many queries from
// one port (dnsperf, a forwarder with a fixed socket) gets its answers
// grouped; resolvers that use a port per query do not, and cost what
// they did.

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
	conn  *net.UDPConn // for the answers of suspended queries (suspend.go)
	key   listenerKey
	steer *udpSteer // nil: no switching (one socket, no program)
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
	// segs[k] is how many answers out[k] carries: more than one when
	// consecutive answers to one requester have one length and go as one
	// UDP GSO send (ctl[k] holds its UDP_SEGMENT size), which the kernel
	// cuts into datagrams again.
	segs [udpBatch]int
	from [udpBatch]int // the datagram whose address out[k] answers
	nio  int           // outIo and sent in use
	ctl  [udpBatch][gsoCmsgLen]byte
	gso  bool // the kernel takes UDP_SEGMENT on this socket
	// vl is the listener's VLAN list, cur what it was when the batch was
	// read (nil: nothing to check) and arr each datagram's arrival
	// interface, asked of the kernel only then (vlans_linux.go).
	vl  *atomic.Pointer[config.VLANFilter]
	cur *config.VLANFilter
	arr [udpBatch][rawsock.ArrivalCmsgLen]byte
	// The last call's results, for the RawConn functions.
	n     int
	errno unix.Errno
	done  int
}

// recv reads what is queued on fd; false (nothing queued) makes the
// RawConn wait in the netpoller and call it again.
func (b *udpBatcher) recv(fd uintptr) bool {
	if b.vl != nil {
		b.cur = b.vl.Load()
	}
	for i := range b.in {
		h := &b.in[i].hdr
		h.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		h.Flags = 0
		if b.cur != nil {
			h.Control = &b.arr[i][0]
			h.SetControllen(rawsock.ArrivalCmsgLen)
		} else {
			h.Control, h.Controllen = nil, 0
		}
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
			if b.segs[b.done] > 1 {
				// The group goes again as one datagram per answer. EIO and
				// EINVAL say the route cannot take a GSO send (a device
				// without checksum offload, IPsec): this reader stops
				// grouping.
				if e == unix.EIO || e == unix.EINVAL {
					b.gso = false
				}
				b.ungroup(fd, b.done)
			}
			// Else the datagram at done could not go (the requester's
			// address unreachable, no buffer): it is dropped, as a lost
			// answer would be.
			b.done++
		}
	}
	return true
}

// gsoCmsgLen is the room of one UDP_SEGMENT control message: a cmsghdr
// and its uint16, aligned.
const gsoCmsgLen = 24

// gsoMaxSegment is the largest answer grouped: EDNS's 1232, which fits a
// datagram on any Ethernet path, so the kernel never refuses a segment
// size for the device's MTU.
const gsoMaxSegment = 1232

// ungroup sends the answers of the GSO message out[k] one by one with
// sendmsg. An answer the kernel does not take is lost, as a datagram
// sendmmsg refuses is.
func (b *udpBatcher) ungroup(fd uintptr, k int) {
	o := b.out[k].hdr
	o.Control, o.Controllen = nil, 0
	iov := o.Iov
	for i := 0; i < b.segs[k]; i++ {
		o.Iov = (*unix.Iovec)(unsafe.Add(unsafe.Pointer(iov), i*int(unsafe.Sizeof(*iov))))
		o.SetIovlen(1)
		unix.RawSyscall(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(&o)), unix.MSG_DONTWAIT)
	}
}

// gsoSupported says whether the kernel takes UDP_SEGMENT on fd (Linux
// 4.18 and later).
func gsoSupported(c *net.UDPConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		_, err := unix.GetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT)
		ok = err == nil
	})
	return ok
}

// newBatcher makes the reader state of socket c of listener k.
func (s *Server) newBatcher(c *net.UDPConn, k listenerKey) *udpBatcher {
	b := &udpBatcher{s: s, key: k, gso: gsoSupported(c), conn: c}
	b.ctx.shard = int(s.readers.Add(1) - 1)
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
	return b
}

// serveUDP answers the queries arriving on one socket until it is
// closed, a batch of datagrams per system call each way. The reader
// stays inside one RawConn.Read while it finds queries (serve): the
// netpoller's readiness is reset once when a Read starts, so a batch
// that read less than udpBatch (the queue was empty then) can wait for
// readiness at once instead of calling recvmmsg again to see it fail:
// a datagram that arrived since made the socket ready after the reset.
func (s *Server) serveUDP(c *net.UDPConn, k listenerKey, steer *udpSteer, vl *atomic.Pointer[config.VLANFilter]) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	b := s.newBatcher(c, k)
	b.steer, b.vl = steer, vl
	serve, send := b.serve, b.send // bound once: no closure per call
	for {
		if err := rc.Read(serve); err != nil {
			return // closed
		}
		switch {
		case b.done < b.nout:
			// The send buffer was full: the rest goes once it drains.
			if err := rc.Write(send); err != nil {
				return
			}
			b.release()
		case b.errno != 0 && b.errno != unix.EINTR:
			// An error concerns one datagram (ICMP reports, ENOMEM);
			// pause a little so a persistent one cannot spin.
			time.Sleep(time.Millisecond)
		}
	}
}

// serveBatches bounds the full batches one serve call answers before it
// returns to serveUDP's loop, where a closed socket ends the reader.
const serveBatches = 64

// serve reads, answers and sends batches on fd. It returns false (the
// RawConn waits until the socket is readable and calls it again) when
// recvmmsg found nothing or read less than a full batch, true to leave
// the Read: an error to pause on (errno), a send the socket's buffer
// did not take (done < nout), or serveBatches full batches answered.
func (b *udpBatcher) serve(fd uintptr) bool {
	for range serveBatches {
		b.recv(fd)
		switch b.errno {
		case 0:
		case unix.EAGAIN:
			return false
		default:
			return true
		}
		b.ctx.now = b.s.now()
		if b.steer != nil {
			b.steer.note(b.ctx.shard, b.n, b.n == udpBatch, b.ctx.now)
		}
		b.answer(b.n)
		b.s.flushSeen(&b.ctx)
		b.done = 0
		if !b.send(fd) {
			return true
		}
		b.release()
		if b.n < udpBatch {
			return false
		}
	}
	return true
}

// release lets the answers just sent go: the out headers no longer
// point at them.
func (b *udpBatcher) release() {
	for i := range b.sent[:b.nio] {
		b.sent[i] = nil
	}
}

// answer answers the n datagrams just read and lays out the answers to
// send.
func (b *udpBatcher) answer(n int) {
	b.nout, b.nio = 0, 0
	async := b.s.plan.Load().afterRules
	for i := 0; i < n; i++ {
		h := &b.in[i]
		src, ok := sockaddrAddr(&b.names[i], h.hdr.Namelen)
		if !ok {
			continue
		}
		if b.cur != nil && !b.cur.Admits(rawsock.PktinfoIf(b.arr[i][:min(int(h.hdr.Controllen), rawsock.ArrivalCmsgLen)])) {
			// From a VLAN the listener is not enabled on: dropped.
			b.s.stats.dropped.Inc(b.ctx.shard)
			continue
		}
		if async { // a rule may suspend the query: not in this reader
			from := netip.AddrPortFrom(src, sockaddrPort(&b.names[i]))
			b.s.answerAsync(b.conn, b.bufs[i][:min(int(h.len), udpBufSize)], from, b.key)
			continue
		}
		b.ctx.port = sockaddrPort(&b.names[i])
		resp, send := b.s.answerUDP(b.bufs[i][:min(int(h.len), udpBufSize)], src, b.resp[i][:0], b.key, &b.ctx)
		if cap(resp) > cap(b.resp[i]) && cap(resp) <= 64<<10 {
			b.resp[i] = resp[:0]
		}
		if !send || len(resp) == 0 {
			continue
		}
		j := b.nio
		b.sent[j] = resp
		b.outIo[j].Base = &resp[0]
		b.outIo[j].SetLen(len(resp))
		b.nio++
		if k := b.nout - 1; b.gso && k >= 0 && b.segs[k] < udpBatch && b.sameGroup(k, i, len(resp)) {
			// One more answer of the same length to the same requester:
			// a further segment of out[k].
			b.segs[k]++
			b.out[k].hdr.SetIovlen(b.segs[k])
			if b.segs[k] == 2 {
				b.setSegment(k, len(resp))
			}
			continue
		}
		k := b.nout
		b.segs[k] = 1
		b.from[k] = i
		o := &b.out[k].hdr
		o.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		o.Namelen = h.hdr.Namelen
		o.Iov = &b.outIo[j]
		o.SetIovlen(1)
		o.Control, o.Controllen = nil, 0
		b.nout++
	}
}

// sameGroup says whether the answer to datagram i, of n bytes, can join
// out[k]: the same requester's address and the length of out[k]'s
// answers.
func (b *udpBatcher) sameGroup(k, i, n int) bool {
	o := &b.out[k].hdr
	if n > gsoMaxSegment || (b.segs[k]+1)*n > 60000 || int(o.Iov.Len) != n || o.Namelen != b.in[i].hdr.Namelen {
		return false
	}
	a := unsafe.Slice((*byte)(unsafe.Pointer(&b.names[b.from[k]])), o.Namelen)
	c := unsafe.Slice((*byte)(unsafe.Pointer(&b.names[i])), o.Namelen)
	return string(a) == string(c)
}

// setSegment gives out[k] its UDP_SEGMENT control message: the kernel
// cuts the message into datagrams of size bytes.
func (b *udpBatcher) setSegment(k, size int) {
	c := &b.ctl[k]
	h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&c[unix.CmsgLen(0)])) = uint16(size)
	o := &b.out[k].hdr
	o.Control = &c[0]
	o.SetControllen(unix.CmsgSpace(2))
}

// sockaddrPort is the port of a sockaddr recvmmsg filled in (network
// byte order in the structure).
func sockaddrPort(sa *unix.RawSockaddrInet6) uint16 {
	p := (*[2]byte)(unsafe.Pointer(&sa.Port)) // the same offset in sockaddr_in
	return uint16(p[0])<<8 | uint16(p[1])
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
