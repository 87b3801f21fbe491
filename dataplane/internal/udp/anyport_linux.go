package udp

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"golang.org/x/sys/unix"
)

// A UDP virtual on every port of its address (`destination ADDR:any`)
// has one socket group bound at a free port of the address, to which the
// plane's sk_lookup program (dataplane/internal/sklookup) steers the
// datagrams for every other port. The kernel rewrites nothing: each
// datagram's destination address and port are read from its
// IP_ORIGDSTADDR control message (IP_RECVORIGDSTADDR, set on the
// listener's sockets: a network virtual's datagrams are for many
// addresses), a flow is one client address and port to one address and
// port, and its
// answers leave from a socket of its own bound to that address and port
// (SO_REUSEADDR, so that two clients' flows to one port may share it),
// so that the client hears from the port it sent to. That socket is not
// connected, so it never takes the client's datagrams (the kernel gives
// a steered datagram to the program's socket before any unconnected
// one), and a filter drops anything the kernel's own lookup would hand
// it (the host sending to its own address, which the program does not
// steer).

// origDstLen is room for one IP_ORIGDSTADDR or IPV6_ORIGDSTADDR control
// message (a sockaddr_in6, the larger: unix.CmsgSpace(28) is 48 on a
// 64-bit system, less on a 32-bit one).
const origDstLen = 48

// ctlLen is room for a datagram's control messages: its arrival
// interface (a VLAN list to check) and its original destination (a
// listener on every port).
const ctlLen = rawsock.ArrivalCmsgLen + origDstLen

// setOrigDst has the kernel give each datagram read on fd its original
// destination address and port.
func setOrigDst(fd int, v6 bool) error {
	if v6 {
		return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVORIGDSTADDR, 1)
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVORIGDSTADDR, 1)
}

// origDst is the destination address and port in a datagram's control
// messages, invalid when they carry none. It allocates nothing.
func origDst(ctl []byte) netip.AddrPort {
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(ctl) {
			return netip.AddrPort{}
		}
		data := ctl[unix.CmsgLen(0):n]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_ORIGDSTADDR && len(data) >= 8: // sockaddr_in
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(data[4:8])), uint16(data[2])<<8|uint16(data[3]))
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_ORIGDSTADDR && len(data) >= 24: // sockaddr_in6
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(data[8:24])).Unmap(), uint16(data[2])<<8|uint16(data[3]))
		}
		ctl = ctl[min(unix.CmsgSpace(n-unix.CmsgLen(0)), len(ctl)):]
	}
	return netip.AddrPort{}
}

// dropAll is a socket filter that keeps nothing: a flow's answering
// socket only sends.
var dropAll = [1]unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}

// replySocket is the socket a flow on every port answers from: bound to
// local (the address and the port the client sent to), with the udp
// profile's client-side settings.
func replySocket(local netip.AddrPort, snap *state.VirtualSnap) (*net.UDPConn, syscall.RawConn, error) {
	side := snap.Cfg.ClientTCP
	lc := net.ListenConfig{Control: func(network, addr string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr != nil {
				return
			}
			serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: 1, Filter: &dropAll[0]})
		})
		if err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
		return sockopt.FreeBind6(network, addr, c) // an IPv6 network's unassigned address
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp", local.String())
	if err != nil {
		return nil, nil, err
	}
	c := pc.(*net.UDPConn)
	rc, _ := c.SyscallConn()
	if side != nil {
		if side.SendBuffer > 0 {
			c.SetWriteBuffer(side.SendBuffer)
		}
		rc.Control(func(fd uintptr) { sockopt.ApplyDatagram(int(fd), side) })
	}
	return c, rc, nil
}
