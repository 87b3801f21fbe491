package sockopt

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
)

// DialUDP makes a UDP socket connected to dst and bound to src: the one
// way a UDP virtual's flows and a rule's UDP listeners open their
// server side. src's port is kept when free, else any port of its
// address; an invalid src, or an address not of this host (a remote
// client without SNAT), lets the kernel choose.
func DialUDP(src, dst netip.AddrPort) (*net.UDPConn, error) {
	raddr := net.UDPAddrFromAddrPort(dst)
	if !src.IsValid() {
		return net.DialUDP("udp", nil, raddr)
	}
	if src.Port() != 0 {
		if c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(src), raddr); err == nil {
			return c, nil
		}
	}
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src.Addr(), 0)), raddr)
	if err != nil && errors.Is(err, syscall.EADDRNOTAVAIL) {
		return net.DialUDP("udp", nil, raddr)
	}
	return c, err
}
