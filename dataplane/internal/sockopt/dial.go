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

// DialUDPFrom is DialUDP from exactly src's address (any port when
// src's is 0 or taken) with FreeBind6: for a leg that leaves from an
// address of this host the client reached (an ip-forward to it), which
// may be an IPv6 network's unassigned address.
func DialUDPFrom(src, dst netip.AddrPort) (*net.UDPConn, error) {
	d := net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(src), Control: FreeBind6}
	c, err := d.Dial("udp", dst.String())
	if err != nil && src.Port() != 0 {
		d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src.Addr(), 0))
		c, err = d.Dial("udp", dst.String())
	}
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

// FreeBind6 is a net.Dialer and net.ListenConfig Control for the
// sockets that bind an address of an IPv6 network (a listener, a data
// listener, a udp answering socket, a connection leaving from the
// address the client reached): FreeBind on an IPv6 socket, nothing on an
// IPv4 one (IPv4 binds an address of a local route as it is). A kernel
// that refuses the option leaves the socket as it was: the bind then
// says what is wrong ("cannot assign requested address").
func FreeBind6(network, _ string, c syscall.RawConn) error {
	if network == "" || network[len(network)-1] != '6' {
		return nil
	}
	return c.Control(func(fd uintptr) { _ = FreeBind(int(fd)) })
}
