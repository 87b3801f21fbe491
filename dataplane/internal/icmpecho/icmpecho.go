// Package icmpecho is one ICMP or ICMPv6 echo exchange on a raw socket:
// what the gateway-icmp monitor and the GSLB's icmp path probe both send.
// It lives apart so that the two cannot drift in how they match a reply
// (by identifier, sequence and source: a raw socket sees every echo reply
// the host receives, other probes' included).
package icmpecho

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/cksum"
)

// Network is the packet network to open for an exchange with dst (raw
// sockets need root or CAP_NET_RAW).
func Network(dst netip.Addr) string {
	if dst.Unmap().Is6() {
		return "ip6:ipv6-icmp"
	}
	return "ip4:icmp"
}

// ErrNoReply is an exchange whose socket ended (its deadline passed, or
// it was closed) before the matching echo reply came.
var ErrNoReply = errors.New("no echo reply")

// maxForeign bounds the other ICMP messages one exchange reads past.
const maxForeign = 1000

// Exchange sends one echo request carrying payload to dst on pc, a socket
// of Network(dst), and reads until the echo reply with the same
// identifier and sequence comes from dst. pc's deadline bounds it: a read
// that fails is ErrNoReply, a send that fails its own error.
func Exchange(pc net.PacketConn, dst netip.Addr, payload string) error {
	dst = dst.Unmap()
	reqType, replyType := byte(8), byte(0)
	if dst.Is6() {
		reqType, replyType = 128, 129
	}
	id, seq := uint16(rand.Uint32()), uint16(rand.Uint32())
	msg := make([]byte, 8+len(payload))
	msg[0] = reqType
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	copy(msg[8:], payload)
	if !dst.Is6() { // the kernel computes ICMPv6 checksums itself
		binary.BigEndian.PutUint16(msg[2:], cksum.Internet(msg))
	}
	to := &net.IPAddr{IP: dst.AsSlice()}
	if _, err := pc.WriteTo(msg, to); err != nil {
		return err
	}
	buf := make([]byte, 1500)
	for range maxForeign {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return ErrNoReply
		}
		if n < 8 || buf[0] != replyType || binary.BigEndian.Uint16(buf[4:]) != id || binary.BigEndian.Uint16(buf[6:]) != seq {
			continue
		}
		if ip, ok := from.(*net.IPAddr); ok && ip.IP.Equal(to.IP) {
			return nil
		}
	}
	return ErrNoReply
}
