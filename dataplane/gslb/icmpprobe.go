package gslb

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

// errICMPPrivilege is why an icmp path probe cannot run: raw ICMP
// sockets need root or CAP_NET_RAW, as BIG-IP's big3d has.
var errICMPPrivilege = errors.New("icmp probe needs a raw ICMP socket (root or CAP_NET_RAW)")

// probeICMP is metrics-collection-protocols' icmp: one ICMP echo from
// src to the LDNS, its round trip the time to the matching echo reply
// (BIG-IP's big3d collects path metrics with ICMP by default). An LDNS
// that does not answer echoes fails it, and the next protocol is tried.
func probeICMP(ctx context.Context, src, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	dst = dst.Unmap()
	network, reqType, replyType := "ip4:icmp", byte(8), byte(0)
	if dst.Is6() {
		network, reqType, replyType = "ip6:ipv6-icmp", 128, 129
	}
	laddr := ""
	if src.IsValid() {
		laddr = src.Unmap().String()
	}
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, network, laddr)
	if err != nil {
		return 0, errICMPPrivilege
	}
	defer pc.Close()
	start := time.Now()
	pc.SetDeadline(start.Add(timeout))
	stop := context.AfterFunc(ctx, func() { pc.SetDeadline(time.Now()) })
	defer stop()
	id, seq := uint16(rand.Uint32()), uint16(rand.Uint32())
	msg := make([]byte, 16)
	msg[0] = reqType
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	copy(msg[8:], "openltm?")
	if !dst.Is6() { // the kernel computes ICMPv6 checksums itself
		binary.BigEndian.PutUint16(msg[2:], cksum.Internet(msg))
	}
	to := &net.IPAddr{IP: dst.AsSlice()}
	if _, err := pc.WriteTo(msg, to); err != nil {
		return 0, err
	}
	buf := make([]byte, 1500)
	for range 1000 { // other probes' replies reach this socket too
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return 0, err
		}
		if n < 8 || buf[0] != replyType || binary.BigEndian.Uint16(buf[4:]) != id || binary.BigEndian.Uint16(buf[6:]) != seq {
			continue
		}
		if ip, ok := from.(*net.IPAddr); !ok || !ip.IP.Equal(to.IP) {
			continue
		}
		return time.Since(start), nil
	}
	return 0, errors.New("icmp probe: no echo reply among the ICMP messages received")
}
