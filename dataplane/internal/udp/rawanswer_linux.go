package udp

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An ip-forward UDP virtual on every port (`destination ADDR:any
// ip-protocol udp ip-forward`, no pool) sends each datagram on to where
// its client was going, the address and port it sent to, which is an
// address of this host (the steering sees only those): the leg leaves
// from that address (the steering never takes a datagram whose source
// is its destination), and reaches the socket of the program on that
// port. Its answers must reach the client from that same address and
// port, but no socket of ours can be bound there: that program's socket
// holds the port (bound without SO_REUSEADDR, ours could not be bound;
// with it, ours, the more specific or the later, would be handed the
// forwarded datagrams). So such a flow's answers leave by a raw socket
// (IPPROTO_RAW: send only, it is handed nothing), whose IP and UDP
// headers the flow writes: source the address and port the client sent
// to, TTL or hop limit 64 [M], the UDP checksum computed here.

// rawAnswers is the engine's two send-only raw sockets, opened with the
// first flow that needs one (-1: none could be). mu orders the engine's
// close after every send in progress: a leg's reader is not waited for
// when the engine closes, and a send after it must not write to a
// descriptor number the process has since given to another socket.
type rawAnswers struct {
	once     sync.Once
	mu       sync.RWMutex
	fd4, fd6 int
}

func (r *rawAnswers) open() {
	r.once.Do(func() {
		r.fd4, r.fd6 = -1, -1
		if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW); err == nil {
			r.fd4 = fd
		}
		if fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW); err == nil {
			r.fd6 = fd
		}
	})
}

// close closes the sockets, if they were opened.
func (r *rawAnswers) close() {
	r.once.Do(func() { r.fd4, r.fd6 = -1, -1 })
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fd := range []int{r.fd4, r.fd6} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	r.fd4, r.fd6 = -1, -1
}

// ok reports whether an answer from from can be sent (the socket of its
// family opened).
func (r *rawAnswers) ok(from netip.AddrPort) bool {
	r.open()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if from.Addr().Is4() {
		return r.fd4 >= 0
	}
	return r.fd6 >= 0
}

// rawHdrMax is the longest header rawSend writes: IPv6 and UDP.
const rawHdrMax = 40 + 8

// send sends payload b to to from from as one UDP datagram.
func (r *rawAnswers) send(from, to netip.AddrPort, b []byte) error {
	var h [rawHdrMax]byte
	n := udpHeader(&h, from, to, b)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.fd4 < 0 && r.fd6 < 0 {
		return unix.EBADF // closed with the engine
	}
	if from.Addr().Is4() {
		sa := &unix.SockaddrInet4{Addr: to.Addr().As4()}
		_, err := unix.SendmsgBuffers(r.fd4, [][]byte{h[:n], b}, nil, sa, 0)
		return err
	}
	sa := &unix.SockaddrInet6{Addr: to.Addr().As16()}
	_, err := unix.SendmsgBuffers(r.fd6, [][]byte{h[:n], b}, nil, sa, 0)
	return err
}

// udpHeader writes the IP (v4 or v6, as from's address) and UDP headers
// of b from from to to into h and returns their length. In IPv4 the
// kernel fills the total length, the identification and the header
// checksum (IP_HDRINCL).
func udpHeader(h *[rawHdrMax]byte, from, to netip.AddrPort, b []byte) int {
	ulen := 8 + len(b)
	var ip int
	var sum uint32
	if from.Addr().Is4() {
		ip = 20
		h[0] = 0x45
		h[6] = 0x40 // don't fragment
		h[8] = 64
		h[9] = unix.IPPROTO_UDP
		s, d := from.Addr().As4(), to.Addr().As4()
		copy(h[12:16], s[:])
		copy(h[16:20], d[:])
		sum = sum16(sum, h[12:20])
		sum += unix.IPPROTO_UDP + uint32(ulen)
	} else {
		ip = 40
		h[0] = 0x60
		binary.BigEndian.PutUint16(h[4:], uint16(ulen))
		h[6] = unix.IPPROTO_UDP
		h[7] = 64
		s, d := from.Addr().As16(), to.Addr().As16()
		copy(h[8:24], s[:])
		copy(h[24:40], d[:])
		sum = sum16(sum, h[8:40])
		sum += unix.IPPROTO_UDP + uint32(ulen)
	}
	u := h[ip : ip+8]
	binary.BigEndian.PutUint16(u[0:], from.Port())
	binary.BigEndian.PutUint16(u[2:], to.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(ulen))
	sum = sum16(sum, u[:6])
	sum = sum16(sum, b)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	c := ^uint16(sum)
	if c == 0 {
		c = 0xffff // 0 means no checksum (RFC 768)
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return ip + 8
}

// sum16 adds b to sum as 16-bit big-endian words (an odd last byte
// padded with zero).
func sum16(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
		if sum > 0x7fffffff {
			sum = sum&0xffff + sum>>16
		}
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

// answerRaw sends a batch of answers to the flow's client by the raw
// socket, counting in lg.answered those that left (it stops at the
// first that cannot).
func (lg *leg) answerRaw(iovs []unix.Iovec) {
	f := lg.f
	for i := range iovs {
		if f.l.e.raw.send(f.Local, f.Client, unsafe.Slice(iovs[i].Base, int(iovs[i].Len))) != nil {
			return
		}
		lg.answered++
	}
}
