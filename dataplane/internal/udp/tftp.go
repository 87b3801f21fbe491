package udp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/tftp"
)

// TFTP (the tftp profile on a UDP virtual, BIG-IP's TFTP ALG): a client's
// read or write request (RRQ, WRQ) goes to the member's port 69 as any
// datagram does, but the member answers from a port of its own, the
// transfer's (RFC 1350 TID). A leg of such a virtual is therefore not
// connected to port 69: its socket, bound to the flow's SNAT source,
// takes datagrams from any port of the member's address. The first
// answer to a request names the transfer's port; the client's next
// datagrams (ACK, DATA, ERROR) go there, and the member's reach the
// client from the virtual's address and port, which the client takes for
// the server's transfer port [M: BIG-IP's own source port toward the
// client is not known; curl, tftp-hpa and atftp take a server's first
// answer from any port and pin it]. A new request from the same client
// port starts over at port 69. Datagrams from another address, or from
// another port once the transfer's is known, are dropped (RFC 1350 §4
// answers them with an error; the proxy stays silent [M]). Blocks,
// options (RFC 2347-2349) and errors pass through as sent, so block
// numbers that wrap past 65535 and any block size work. With an lsn pool
// the leg's socket is on a translation of it (lsn.go, dialLSN). A virtual
// without the profile pays one nil check per datagram each way.

// listenFrom makes the unconnected socket of a TFTP leg, bound to src
// (src's port when free, else any; an invalid src lets the kernel
// choose), in dst's family. reached: src is the address the client
// reached (automap on a network or every port), of this host though
// perhaps an IPv6 network's unassigned one: bound as it is with
// IPV6_FREEBIND (sockopt.FreeBind6), never the kernel's choice, as the
// other legs' sockopt.DialUDPFrom.
func listenFrom(src, dst netip.AddrPort, reached bool) (*net.UDPConn, error) {
	if reached && src.IsValid() {
		return listenReached(src)
	}
	if !src.IsValid() {
		if dst.Addr().Is4() {
			return net.ListenUDP("udp4", nil)
		}
		return net.ListenUDP("udp6", nil)
	}
	if src.Port() != 0 {
		if c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(src)); err == nil {
			return c, nil
		}
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src.Addr(), 0)))
	if err != nil && errors.Is(err, syscall.EADDRNOTAVAIL) {
		return listenFrom(netip.AddrPort{}, dst, false)
	}
	return c, err
}

// listenReached is listenFrom for the address the client reached: src's
// port when free, else any port of that address; the error when the
// address cannot be bound.
func listenReached(src netip.AddrPort) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: sockopt.FreeBind6}
	pc, err := lc.ListenPacket(context.Background(), "udp", src.String())
	if err != nil && src.Port() != 0 {
		pc, err = lc.ListenPacket(context.Background(), "udp", netip.AddrPortFrom(src.Addr(), 0).String())
	}
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

// tftpSend sends a client datagram to the leg's member: a request to the
// port the leg was opened to (69), forgetting the last transfer's port;
// anything else to the transfer's port once the member answered from it.
func (lg *leg) tftpSend(b []byte) {
	dst := lg.rec.Server
	if tftp.IsRequest(b) {
		lg.tid.Store(0)
	} else if p := lg.tid.Load(); p != 0 {
		dst = netip.AddrPortFrom(dst.Addr(), uint16(p))
	}
	if _, err := lg.conn.WriteToUDPAddrPort(b, dst); err != nil {
		return // a refused or full socket loses the datagram, as UDP does
	}
	lg.countOut(uint64(len(b)), 1)
}

// tftpFrom reports whether a datagram from src belongs to the leg's
// transfer, learning the transfer's port from the member's first answer.
func (lg *leg) tftpFrom(src netip.AddrPort) bool {
	srv := lg.rec.Server
	if src.Addr().Unmap() != srv.Addr().Unmap() {
		return false
	}
	p := uint32(src.Port())
	if lg.tid.CompareAndSwap(0, p) {
		return true
	}
	return lg.tid.Load() == p
}
