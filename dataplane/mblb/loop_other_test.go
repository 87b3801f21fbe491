//go:build !linux

package mblb

import (
	"net"
	"net/netip"
)

// Without event loops the engine's tests run on goroutines only.
const onLoops = false

func loopSession(*Engine, net.Conn, ClientOptions, func()) *ClientConn { return nil }

func loopDial(netip.AddrPort, Member) (int, bool, netip.AddrPort, error) {
	return -1, false, netip.AddrPort{}, nil
}
