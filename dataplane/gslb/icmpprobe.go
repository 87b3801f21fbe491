package gslb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/icmpecho"
)

// errICMPPrivilege is why an icmp path probe cannot run: raw ICMP
// sockets need root or CAP_NET_RAW, as BIG-IP's big3d has.
var errICMPPrivilege = errors.New("icmp probe needs a raw ICMP socket (root or CAP_NET_RAW)")

// probeICMP is metrics-collection-protocols' icmp: one ICMP echo from
// src to the LDNS, its round trip the time to the matching echo reply
// (BIG-IP's big3d collects path metrics with ICMP by default). An LDNS
// that does not answer echoes fails it, and the next protocol is tried.
func probeICMP(ctx context.Context, src, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	laddr := ""
	if src.IsValid() {
		laddr = src.Unmap().String()
	}
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, icmpecho.Network(dst), laddr)
	if err != nil {
		return 0, errICMPPrivilege
	}
	defer pc.Close()
	start := time.Now()
	pc.SetDeadline(start.Add(timeout))
	stop := context.AfterFunc(ctx, func() { pc.SetDeadline(time.Now()) })
	defer stop()
	if err := icmpecho.Exchange(pc, dst, "openltm?"); err != nil {
		return 0, fmt.Errorf("icmp probe: %w", err)
	}
	return time.Since(start), nil
}
