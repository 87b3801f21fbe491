package dataplane

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// The glue between the plane and HTTP/3 (dataplane/http3): a UDP
// virtual with quic and http3 profiles (Virtual.HTTP3) binds its own
// UDP socket for QUIC instead of a datagram listener, and each QUIC
// connection it admits is a client of the virtual's HTTP engine
// (internal/mblbvs/http3.go). Virtuals without the profiles pay
// nothing: their listeners are the UDP ones of udp.go.

// h3Listener is one HTTP/3 virtual's socket.
type h3Listener struct {
	VS atomic.Pointer[state.Virtual]
	l  *http3.Listener
}

// bindH3 binds the QUIC sockets of cfg's HTTP/3 virtuals that are not
// bound yet, into b. On error it closes what it bound. The caller
// holds p.mu.
func (p *Plane) bindH3(cfg *Config, b *generation) error {
	b.wantH3, b.freshH3 = map[netip.AddrPort]string{}, map[netip.AddrPort]*h3Listener{}
	for name, v := range cfg.Virtuals {
		if v.HTTP3 == nil || !v.IsUDP() {
			continue
		}
		aps, _ := v.Listeners()
		for _, ap := range aps {
			b.wantH3[ap] = name
		}
	}
	for ap, name := range b.wantH3 {
		if p.h3Listeners[ap] != nil {
			continue
		}
		if p.udpListeners[ap] != nil {
			// A plain UDP virtual's socket holds the address until the
			// swap stops it (a virtual turned into HTTP/3): bound then.
			b.lateH3 = append(b.lateH3, ap)
			continue
		}
		l, err := p.listenH3(ap, cfg.Virtuals[name].HTTP3)
		if err != nil {
			for _, l := range b.freshH3 {
				l.l.Close()
			}
			return fmt.Errorf("virtual %s: cannot listen on %s (udp, quic): %v", name, ap, rawsock.UnwrapOp(err))
		}
		b.freshH3[ap] = l
	}
	return nil
}

// listenH3 opens one virtual address's QUIC socket, not yet serving.
func (p *Plane) listenH3(ap netip.AddrPort, cfg *http3.Config) (*h3Listener, error) {
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
	if err != nil {
		return nil, err
	}
	h := &h3Listener{}
	tlsConf := func() *tls.Config {
		vs := h.VS.Load()
		if vs == nil {
			return nil
		}
		if t := vs.Snap.Load().Cfg.TLS; t != nil {
			return t.Client
		}
		return nil
	}
	l, err := http3.Listen(pc, tlsConf, cfg, func(c *http3.Conn) (http3.Client, bool) {
		vs := h.VS.Load()
		if vs == nil {
			return nil, false
		}
		snap := vs.Snap.Load()
		if !vs.Admit(snap, c.Remote, c.Local) {
			return nil, false
		}
		return p.mblbs.HTTP3Client(vs, snap, c.Remote, c.Local, c.Arrival, c.Hello, c.Reset)
	})
	if err != nil {
		pc.Close()
		return nil, err
	}
	h.l = l
	return h, nil
}

// retireH3 closes the QUIC sockets cfg dropped, before the UDP
// listeners are swapped (swap): a virtual turned from HTTP/3 into plain
// UDP on the same address binds its datagram socket then. The caller
// holds p.mu.
func (p *Plane) retireH3(b *generation) {
	for ap, l := range p.h3Listeners {
		if _, ok := b.wantH3[ap]; !ok {
			l.l.Close() // its clients' connections end with it; the address is free
			delete(p.h3Listeners, ap)
		}
	}
}

// swapH3 binds the sockets a plain UDP listener held until the swap
// (lateH3), hands the QUIC sockets to their (new) virtuals, with their
// profiles for the connections that come next, and starts the new ones.
// The caller holds p.mu.
func (p *Plane) swapH3(b *generation) {
	for _, ap := range b.lateH3 {
		name := b.wantH3[ap]
		l, err := p.listenH3(ap, h3Config(b.virtuals[name].Snap.Load(), ap))
		if err != nil {
			p.log.Error("virtual " + name + ": cannot listen on " + ap.String() + " (udp, quic): " + rawsock.UnwrapOp(err).Error())
			continue
		}
		b.freshH3[ap] = l
	}
	started, retired := swapListeners(p.h3Listeners, b.freshH3, b.wantH3, b.virtuals, func(l *h3Listener) *atomic.Pointer[state.Virtual] { return &l.VS })
	for ap, l := range p.h3Listeners {
		if v := l.VS.Load(); v != nil {
			l.l.SetConfig(h3Config(v.Snap.Load(), ap))
		}
		// A VLAN-limited SNAT or NAT: each connection's arrival read
		// (dataplane/http3 arrival.go) for its member connections'
		// source choice (mblbvs HTTP3Client).
		l.l.SetArrival(p.snatArrival)
	}
	for _, l := range started {
		go l.l.Serve()
	}
	for _, l := range retired { // (retireH3 closed them already)
		l.l.Close()
	}
}

// takeH3 takes every QUIC socket out of the plane (Plane.Close, which
// closes them once the flows were aborted: a listener's Close waits for
// its requests). The caller holds p.mu.
func (p *Plane) takeH3() []*h3Listener {
	out := make([]*h3Listener, 0, len(p.h3Listeners))
	for ap, l := range p.h3Listeners {
		out = append(out, l)
		delete(p.h3Listeners, ap)
	}
	return out
}

// h3Config is the QUIC settings of the virtual's socket at ap: its
// profiles', with the idle timeout of its service-policy's timer policy
// rule for udp and ap's port when one decides it (dataplane/timerpol),
// so that a QUIC connection idles out as the policy says rather than as
// the udp profile does. Made once per commit and socket; a virtual
// without a policy keeps its profiles' configuration as is.
func h3Config(snap *state.VirtualSnap, ap netip.AddrPort) *http3.Config {
	base := snap.Cfg.HTTP3
	if snap.Cfg.Timers == nil || base == nil {
		return base
	}
	d, ok := snap.Cfg.Timers.Idle(17, ap.Port())
	if !ok {
		return base
	}
	c := *base
	c.IdleTimeout = d
	if d == 0 { // indefinite
		c.IdleTimeout = -1
	}
	return &c
}
