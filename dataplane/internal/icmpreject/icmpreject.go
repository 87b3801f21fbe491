// Package icmpreject answers a UDP datagram a packet filter rejects the
// way BIG-IP does: an ICMP destination unreachable, port unreachable
// (type 3 code 3, RFC 792; ICMPv6 type 1 code 4, RFC 4443) to the client,
// quoting the datagram's IP and UDP headers so that the client's kernel
// finds the socket it came from (a connected UDP socket's next read
// fails with ECONNREFUSED).
//
// A user-space UDP socket never sees the datagram's IP header, so the
// quoted one is rebuilt from what the socket does see: the addresses,
// the ports and the payload [M: TTL 64 and no options, where the
// original may have had others; the kernel matches on addresses and
// ports only]. The ICMP message leaves through a raw socket, which needs
// CAP_NET_RAW; without it the datagram is dropped, as before, and the
// Sender says so once.
package icmpreject

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/cksum"
)

// Quote bounds: as much of the datagram as fits in IPv4's minimum
// reassembly size (576, RFC 1812 4.3.2.3) or IPv6's minimum MTU (1280,
// RFC 4443 2.4 (c)).
const (
	max4 = 576 - 20 - 8 // the ICMP message after its own IP header
	max6 = 1280 - 40 - 8
)

// Sender sends port unreachables. Its raw sockets are opened on the
// first send, so that a plane that never rejects a datagram holds none.
type Sender struct {
	// Allow is asked before each send (tm.maxrejectrate: the plane's
	// limit on refusals); nil allows every one.
	Allow func() bool
	// Warn takes the one line logged when the raw sockets cannot be
	// opened (no CAP_NET_RAW).
	Warn func(line string)

	once     sync.Once
	fd4, fd6 int
	warned   atomic.Bool
	// Sent counts the unreachables sent.
	Sent atomic.Uint64
}

// PortUnreachable tells client that nothing listens at local for the
// datagram payload it sent there; false when nothing was sent (no raw
// socket, over the rate, a send error).
func (s *Sender) PortUnreachable(client, local netip.AddrPort, payload []byte) bool {
	if s == nil {
		return false
	}
	s.once.Do(s.open)
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	v6 := client.Addr().Is6()
	fd := s.fd4
	if v6 {
		fd = s.fd6
	}
	if fd < 0 {
		if s.Warn != nil && s.warned.CompareAndSwap(false, true) {
			s.Warn("packet filter reject: cannot open a raw ICMP socket (CAP_NET_RAW needed): rejected UDP datagrams are dropped without an ICMP port unreachable")
		}
		return false
	}
	if s.Allow != nil && !s.Allow() {
		return false
	}
	var msg []byte
	if v6 {
		msg = Message6(client, local, payload)
	} else {
		msg = Message4(client, local, payload)
	}
	if send(fd, msg, client.Addr(), local.Addr()) != nil {
		return false
	}
	s.Sent.Add(1)
	return true
}

// Message4 is the ICMP port unreachable (header and checksum included)
// for a datagram from client to local: the quoted IPv4 header, the UDP
// header and the payload's start.
func Message4(client, local netip.AddrPort, payload []byte) []byte {
	q := payload[:min(len(payload), max4-20-8)]
	m := make([]byte, 8+20+8+len(q))
	m[0], m[1] = 3, 3 // destination unreachable, port unreachable
	ip := m[8:28]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(min(20+8+len(payload), 0xffff)))
	ip[8] = 64 // [M] the client's TTL is not known
	ip[9] = 17
	src, dst := client.Addr().As4(), local.Addr().As4()
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:12], cksum.Internet(ip))
	putUDP(m[28:36], client, local, payload)
	copy(m[36:], q)
	binary.BigEndian.PutUint16(m[2:4], cksum.Internet(m))
	return m
}

// Message6 is the ICMPv6 port unreachable for a datagram from client to
// local; its checksum is left to the kernel (a raw ICMPv6 socket
// computes it, with the pseudo-header only the kernel knows for sure).
func Message6(client, local netip.AddrPort, payload []byte) []byte {
	q := payload[:min(len(payload), max6-40-8)]
	m := make([]byte, 8+40+8+len(q))
	m[0], m[1] = 1, 4 // destination unreachable, port unreachable
	ip := m[8:48]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:6], uint16(min(8+len(payload), 0xffff)))
	ip[6] = 17
	ip[7] = 64 // [M] the client's hop limit is not known
	src, dst := client.Addr().As16(), local.Addr().As16()
	copy(ip[8:24], src[:])
	copy(ip[24:40], dst[:])
	putUDP(m[48:56], client, local, payload)
	copy(m[56:], q)
	return m
}

// putUDP writes the quoted UDP header; its checksum is zero ("not
// computed" for IPv4), which no kernel checks in a quote.
func putUDP(h []byte, client, local netip.AddrPort, payload []byte) {
	binary.BigEndian.PutUint16(h[0:2], client.Port())
	binary.BigEndian.PutUint16(h[2:4], local.Port())
	binary.BigEndian.PutUint16(h[4:6], uint16(min(8+len(payload), 0xffff)))
}

// Close closes the raw sockets; a send after it sends nothing.
func (s *Sender) Close() {
	s.once.Do(func() { s.fd4, s.fd6 = -1, -1 })
	closeFD(s.fd4)
	closeFD(s.fd6)
	s.fd4, s.fd6 = -1, -1
}
