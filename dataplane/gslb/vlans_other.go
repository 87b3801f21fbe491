//go:build !linux

package gslb

import (
	"net"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// listenerVLANs holds what the Linux build needs; VLAN lists are Linux
// interfaces, acted on on Linux only.
type listenerVLANs struct {
	vlans atomic.Pointer[config.VLANFilter]
	udp   []*net.UDPConn
	tcp   net.Listener
}

func (l *dnsListener) setVLANs(*config.VLANFilter) {}

func (l *dnsListener) vlanAccept(_ *Server, ln net.Listener) net.Listener { return ln }
