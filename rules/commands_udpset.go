package rules

import (
	"github.com/openltm/openltm/rules/tcl"
)

// UDPSocketConn is the part of a UDP flow UDP::sendbuffer needs: fn runs
// with the side's socket. The client side's is the virtual's listening
// socket, which every client of the virtual shares; the server side's is
// the flow's own socket connected to its member. Optional, checked with a
// type assertion.
type UDPSocketConn interface {
	UDPSocket(s Side, fn func(fd int) error) error
}

func registerUDPSettings(t *tcl.Commands) {
	t.Register("UDP::unused_port", unusedPortCmd("UDP::unused_port", true))
	t.Register("UDP::mss", cmdUDPMSS)
	t.Register("UDP::sendbuffer", cmdUDPSendbuffer)
}

// cmdUDPMSS is UDP::mss ?clientside|serverside?: the largest payload one
// datagram to the side's peer carries without fragmenting, the path MTU
// the kernel knows towards it less the IP and UDP headers (28 bytes over
// IPv4, 48 over IPv6).
func cmdUDPMSS(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "UDP::mss"
	s, c, err := udpSess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	side, ok := sideOf(s, args)
	if !ok {
		return tcl.Empty, tcl.WrongArgs(name + " ?clientside|serverside?")
	}
	peer := c.Addr(remoteEnd(side))
	if !peer.IsValid() {
		return tcl.Empty, tcl.Errorf("%s: the %s has no peer yet", name, side)
	}
	mtu, err := routeMTU(peer)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", name, err)
	}
	hdr := 28
	if peer.Addr().Unmap().Is6() {
		hdr = 48
	}
	return tcl.Int(int64(mtu - hdr)), nil
}

// cmdUDPSendbuffer is UDP::sendbuffer ?BYTES?: the side's socket send
// buffer (SO_SNDBUF, as Linux counts half of what it reports), or sets
// it on the server side's socket, the flow's own. The client side's
// socket is the virtual's listener, shared by all its clients: setting it
// is a Tcl error (the udp profile's send-buffer-size sets it).
func cmdUDPSendbuffer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "UDP::sendbuffer"
	s, c, err := udpSess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	us, ok := c.(UDPSocketConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: this flow has no socket of its own", name)
	}
	switch len(args) {
	case 1:
		var n int
		err := us.UDPSocket(s.side, func(fd int) error {
			var err error
			n, err = getBuf(fd, true)
			return err
		})
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Int(int64(n)), nil
	case 2:
		n, err := args[1].Int64()
		if err != nil || n < 1 || n > 1<<30 {
			return tcl.Empty, tcl.Errorf("%s: %q is not a size in bytes from 1 to %d", name, args[1].String(), 1<<30)
		}
		if s.side == ClientSide {
			return tcl.Empty, tcl.Errorf("%s: the client side's socket is the virtual server's, shared by all its clients; the udp profile's send-buffer-size sets it", name)
		}
		if err := us.UDPSocket(ServerSide, func(fd int) error { return setBuf(fd, true, int(n)) }); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?size?")
}
