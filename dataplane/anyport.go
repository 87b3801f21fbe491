package dataplane

import (
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/internal/l4"
	"github.com/openltm/openltm/dataplane/internal/sklookup"
)

// A virtual on every port of its address (`destination ADDR:any`, no
// traffic-matching-criteria port ranges) listens on one socket at a free
// port of the address; a BPF sk_lookup program attached to the plane's
// network namespace (dataplane/internal/sklookup) hands it the SYNs for
// every other port of the address, save the ports where the plane has a
// port-specific virtual on the same address (most specific wins [M]).
// The accepted connection's local address is the one the client asked
// for, so translate-port disabled, a member at port any and an
// ip-forward virtual all go on to the client's port with no NAT. The
// program runs only while such a virtual exists: without one, no SYN of
// the namespace pays for it.

var anyPortProbe struct {
	once sync.Once
	err  error
}

// AnyPortSupport reports whether this process can steer every port of an
// address (a BPF sk_lookup program, Linux 5.9 and later, with the
// privilege to load and attach it), and why not. It tries once: loads
// the program, attaches it for an instant to the network namespace and
// detaches it.
func AnyPortSupport() error {
	anyPortProbe.once.Do(func() {
		s, err := sklookup.Open()
		if err == nil {
			err = s.Close()
		}
		anyPortProbe.err = err
	})
	return anyPortProbe.err
}

// AnyPortUnsupported is why openltm does not serve v on every port,
// "" when it does (or v is not on every port): what the daemon keeps with
// a warning and Check refuses. An ip-forward virtual is served on every
// port only [M]: openltm's listeners hear only this host's addresses, so
// one on a given port would forward each connection back to itself.
func AnyPortUnsupported(v *Virtual) string {
	switch {
	case !v.AnyPort() && v.IPForward:
		return "an ip-forward virtual on one port or a port list would forward to its own listener: openltm forwards on every port only"
	case !v.AnyPort():
		return ""
	case v.IsUDP():
		return "ip-protocol udp on every port is not served yet (tcp is)"
	case v.MBLB != nil:
		return "a message-based virtual (http, mblb, sip ...) on every port is not served yet"
	case v.FTP != nil || v.RTSP != nil:
		return "an ftp or rtsp virtual on every port is not served yet (the virtual would take its own data connections' ports)"
	case v.ClientTCP.WantsMPTCP():
		return "a Multipath TCP listener (tcp profile mptcp) cannot take the connections of every port"
	}
	return ""
}

// openSteer attaches the steering program when cfg has a virtual on
// every port and none runs yet. The caller holds p.mu.
func (p *Plane) openSteer(want map[netip.AddrPort]string) error {
	if p.steer != nil {
		return nil
	}
	for ap := range want {
		if ap.Port() == 0 {
			s, err := sklookup.Open()
			if err != nil {
				return err
			}
			p.steer = s
			return nil
		}
	}
	return nil
}

// syncSteer points the steering at the running listeners on every port,
// passing over the port-specific ones on their addresses; with none, the
// program is detached. The caller holds p.mu, after the swap.
func (p *Plane) syncSteer() {
	if p.steer == nil {
		return
	}
	var wild []sklookup.Wildcard
	addrs := map[netip.Addr]bool{}
	for ap, l := range p.listeners {
		if ap.Port() == 0 {
			wild = append(wild, sklookup.Wildcard{Addr: ap.Addr(), FD: l4.ListenerFD(l)})
			addrs[ap.Addr()] = true
		}
	}
	if len(wild) == 0 {
		p.closeSteer()
		return
	}
	var specific []netip.AddrPort
	for ap := range p.listeners {
		if ap.Port() != 0 && addrs[ap.Addr()] {
			specific = append(specific, ap)
		}
	}
	if err := p.steer.Sync(wild, specific); err != nil {
		p.log.Error("cannot steer every port", "error", err)
	}
}

// closeSteer detaches the steering program. The caller holds p.mu.
func (p *Plane) closeSteer() {
	if p.steer != nil {
		p.steer.Close()
		p.steer = nil
	}
}
