package dataplane

import (
	"fmt"
	"net/netip"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/internal/udp"
	"github.com/openltm/openltm/dataplane/mrf"
)

// The glue between the plane and the datagram path
// (dataplane/internal/udp): UDP virtuals bind their own sockets, kept
// apart from the TCP listeners, so a udp and a tcp virtual may share an
// address and port; their runtimes (virtual, pools, members, counters,
// monitors) are the ones every other path uses.

// udpSet is the plane's UDP listeners by address.
type udpSet map[netip.AddrPort]*udp.Listener

// newUDP makes the plane's datagram engine.
func (p *Plane) newUDP() *udp.Engine {
	return udp.New(udp.Env{
		Table:   p.table,
		Log:     p.log,
		Pools:   p.rulePools,
		Running: p.running.Load,
		Persist: &p.persist,
		BWC:     &p.bwc,
		Unreach: p.newUnreach(),
		LSN:     &p.lsn,     // LSN::pool (internal/udp/lsn.go)
		Pass:    p.passPort, // a rule's node (anyport.go)
		// A UDP virtual's message router is kept, and closed, with the
		// TCP virtuals' (internal/l4/mrf.go).
		MRFRouter: func(virtual string, cfg *mrf.Config, c *mrf.Counters) *mrf.Router {
			return p.l4.MRFRouter(virtual, cfg, c)
		},
	})
}

// bindUDP binds every UDP address of cfg that is not bound yet, into b.
// On error it closes what it bound and nothing has changed. The caller
// holds p.mu.
func (p *Plane) bindUDP(cfg *Config, b *generation) error {
	b.wantUDP, b.freshUDP = map[netip.AddrPort]string{}, udpSet{}
	for name, v := range cfg.Virtuals {
		if !v.IsUDP() || v.HTTP3 != nil { // HTTP/3: a QUIC socket (http3vs.go)
			continue
		}
		aps, _ := v.Listeners()
		for _, ap := range aps {
			b.wantUDP[ap] = name
		}
	}
	for ap, name := range b.wantUDP {
		if l := p.udpListeners[ap]; l != nil {
			if l.Every() != everyUDP(ap, cfg.Virtuals[name]) {
				// A mask added or taken away on a port: bound anew at
				// the swap, its flows ended [M].
				b.remakeUDP = append(b.remakeUDP, ap)
			}
			continue
		}
		if p.h3Listeners[ap] != nil {
			b.lateUDP = append(b.lateUDP, ap) // an HTTP/3 virtual's until the swap (http3vs.go)
			continue
		}
		l, err := p.listenUDP(ap, cfg.Virtuals[name])
		if err != nil {
			for _, l := range b.freshUDP {
				l.CloseUnstarted()
			}
			return fmt.Errorf("virtual %s: cannot listen on %s (udp): %v", name, ap, rawsock.UnwrapOp(err))
		}
		b.freshUDP[ap] = l
	}
	return nil
}

// listenUDP binds ap for v: a network virtual on a port takes every
// address of its network there (anyport.go).
func (p *Plane) listenUDP(ap netip.AddrPort, v *Virtual) (*udp.Listener, error) {
	if ap.Port() != 0 && everyUDP(ap, v) {
		return p.udp.ListenNetwork(bindAt(ap, v)) // anyport.go
	}
	return p.udp.Listen(ap)
}

// everyUDP reports whether v's listener on ap takes datagrams for other
// addresses or ports than ap: on every port, or a network virtual's.
func everyUDP(ap netip.AddrPort, v *Virtual) bool {
	return ap.Port() == 0 || v != nil && v.Network.IsValid()
}

// swapUDP hands the UDP listeners to their (new) virtuals, starts the new
// ones and stops those cfg dropped. The caller holds p.mu.
func (p *Plane) swapUDP(b *generation) {
	for _, ap := range b.remakeUDP {
		if l := p.udpListeners[ap]; l != nil {
			delete(p.udpListeners, ap)
			p.udp.Stop([]*udp.Listener{l})
			b.lateUDP = append(b.lateUDP, ap)
		}
	}
	for _, ap := range b.lateUDP {
		var vc *Virtual
		if v := b.virtuals[b.wantUDP[ap]]; v != nil {
			vc = v.Snap.Load().Cfg
		}
		l, err := p.listenUDP(ap, vc)
		if err != nil {
			p.log.Error("virtual " + b.wantUDP[ap] + ": cannot listen on " + ap.String() + " (udp): " + rawsock.UnwrapOp(err).Error())
			continue
		}
		b.freshUDP[ap] = l
	}
	started, retired := swapListeners(p.udpListeners, b.freshUDP, b.wantUDP, b.virtuals, func(l *udp.Listener) *atomic.Pointer[state.Virtual] { return &l.VS })
	for ap, l := range p.udpListeners {
		if v := b.virtuals[b.wantUDP[ap]]; v != nil {
			cfg := v.Snap.Load().Cfg
			l.SetOpts(cfg.ClientTCP)            // the udp profile's (internal/udp/udpopts.go)
			l.SetVLANs(p.udpArrival(cfg.VLANs)) // pktfilter.go
		}
	}
	p.udp.Stop(retired)
	p.udp.Start(started)
}

// checkUDP refuses what a virtual's ip-protocol cannot carry.
func checkUDP(name string, v *Virtual, add func(string, ...any)) {
	switch v.Protocol {
	case "", ProtoTCP:
		if v.DatagramLB {
			add("virtual %s: datagram-load-balancing needs ip-protocol udp", name)
		}
	case ProtoUDP:
		if v.MBLB != nil && v.HTTP3 == nil { // an HTTP/3 virtual's HTTP engine (http3vs.go)
			add("virtual %s: an mblb profile needs ip-protocol tcp (this virtual is udp)", name)
		}
	default:
		add("virtual %s: ip-protocol %s is not served (tcp, udp)", name, v.Protocol)
	}
}
