package monitor

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/cksum"
)

// ErrICMPPrivilege is returned when the process may not open a raw ICMP
// socket (gateway-icmp needs root or CAP_NET_RAW).
var ErrICMPPrivilege = errors.New("gateway-icmp needs a raw ICMP socket (root or CAP_NET_RAW)")

// probeICMP sends one echo request and waits for its echo reply.
func probeICMP(ctx context.Context, addr netip.Addr) (Outcome, error) {
	addr = addr.Unmap()
	network, reqType, replyType := "ip4:icmp", byte(8), byte(0)
	if addr.Is6() {
		network, reqType, replyType = "ip6:ipv6-icmp", 128, 129
	}
	pc, err := listenConfig(ctx).ListenPacket(ctx, network, "")
	if err != nil {
		return Outcome{}, ErrICMPPrivilege
	}
	defer pc.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(5 * time.Second)
	}
	pc.SetDeadline(dl)
	id, seq := uint16(rand.Uint32()), uint16(rand.Uint32())
	msg := make([]byte, 16)
	msg[0] = reqType
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	copy(msg[8:], "openltm!")
	if !addr.Is6() { // the kernel computes ICMPv6 checksums itself
		binary.BigEndian.PutUint16(msg[2:], cksum.Internet(msg))
	}
	dst := &net.IPAddr{IP: addr.AsSlice()}
	if _, err := pc.WriteTo(msg, dst); err != nil {
		return Outcome{}, err
	}
	buf := make([]byte, 1500)
	for i := 0; i < 1000; i++ {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return Outcome{}, ErrNoResponse
		}
		if n < 8 || buf[0] != replyType {
			continue
		}
		if ip, ok := from.(*net.IPAddr); !ok || !ip.IP.Equal(dst.IP) {
			continue
		}
		if binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == seq {
			return Outcome{Up: true}, nil
		}
	}
	return Outcome{}, ErrNoResponse
}
