package gslb

import (
	"net"
	"sync/atomic"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// A gtm listener's vlans-enabled and vlans-disabled act as a virtual
// server's: enabled on one interface, its sockets are bound to it
// (SO_BINDTODEVICE) and the kernel refuses the rest; otherwise (several
// interfaces, a disabled list, or a binding the kernel refused) each
// datagram's arrival interface (IP_PKTINFO) is checked as it is read,
// and each TCP connection's as it is accepted. What arrives from another
// VLAN is dropped (a TCP client reset) and counted with the server's
// dropped queries. Without a list a UDP reader pays one nil check per
// batch and a TCP accept one atomic load.

// listenerVLANs is a listener's VLAN state: the list each datagram or
// connection is checked against (nil: none to check), what setVLANs
// last set, the interface the sockets are bound to, and the sockets.
type listenerVLANs struct {
	vlans   atomic.Pointer[config.VLANFilter]
	vlanCfg *config.VLANFilter
	vlanSet bool
	bound   string
	udp     []*net.UDPConn
	tcp     net.Listener
}

// setVLANs applies vl (nil: every VLAN) to the listener's sockets, when
// it changed since the last commit; the caller holds the server's lock.
func (l *dnsListener) setVLANs(vl *config.VLANFilter) {
	if l.vlanSet && l.vlanCfg.Equal(vl) {
		return
	}
	l.vlanSet, l.vlanCfg = true, vl
	dev := ""
	if vl != nil {
		dev = vl.Device
	}
	var rcs []syscall.RawConn
	for _, c := range l.udp {
		if rc, err := c.SyscallConn(); err == nil {
			rcs = append(rcs, rc)
		}
	}
	if tl, ok := l.tcp.(*net.TCPListener); ok {
		if rc, err := tl.SyscallConn(); err == nil {
			rcs = append(rcs, rc)
		}
	}
	failed := false
	if dev != "" || l.bound != "" {
		for _, rc := range rcs {
			rc.Control(func(fd uintptr) { failed = rawsock.BindDevice(int(fd), dev) != nil || failed })
		}
		if !failed {
			l.bound = dev
		}
	}
	// Bound UDP sockets need no check; TCP connections are checked even
	// so, as a virtual server's are.
	check := vl != nil && (dev == "" || failed || l.tcp != nil)
	for _, rc := range rcs {
		rc.Control(func(fd uintptr) { rawsock.SetArrival(int(fd), check) })
	}
	if check {
		l.vlans.Store(vl)
	} else {
		l.vlans.Store(nil)
	}
}

// vlanAccept wraps a TCP listener so that a connection from a VLAN the
// listener is not enabled on is reset as it is accepted, before the DNS
// server sees it.
func (l *dnsListener) vlanAccept(s *Server, ln net.Listener) net.Listener {
	return &vlanListener{Listener: ln, s: s, vl: &l.vlans}
}

type vlanListener struct {
	net.Listener
	s  *Server
	vl *atomic.Pointer[config.VLANFilter]
}

// Accept is the next connection from an admitted VLAN.
func (v *vlanListener) Accept() (net.Conn, error) {
	for {
		c, err := v.Listener.Accept()
		if err != nil {
			return c, err
		}
		vl := v.vl.Load()
		if vl == nil {
			return c, nil
		}
		ifx := 0
		if tc, ok := c.(*net.TCPConn); ok {
			if rc, err := tc.SyscallConn(); err == nil {
				rc.Control(func(fd uintptr) { ifx = rawsock.ArrivalIf(int(fd)) })
			}
		}
		if vl.Admits(ifx) {
			return c, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
		v.s.stats.dropped.Inc(0)
	}
}
