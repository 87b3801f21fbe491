package dataplane

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/l4"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// TCPSide and TOS are a tcp profile's socket settings for one side and a
// pool's IP ToS (dataplane/internal/sockopt), re-exported so the daemon
// can build them.
type (
	TCPSide  = sockopt.Side
	TOS      = sockopt.TOS
	TCPClose = sockopt.Close
)

// UserTimeout is the TCP_USER_TIMEOUT standing for a tcp profile's
// max-retrans and minimum-rto, Linux having neither per socket.
func UserTimeout(maxRetrans int, minRTO time.Duration) time.Duration {
	return sockopt.UserTimeout(maxRetrans, minRTO)
}

// DF values of TCPSide.DF (ip-df-mode set and clear).
const (
	DFSet   = sockopt.DFSet
	DFClear = sockopt.DFClear
)

// CongestionLinux maps BIG-IP's congestion-control names to Linux's
// module names; a name missing has no Linux equivalent.
var CongestionLinux = sockopt.Congestion

// CongestionAvailable is the congestion controls the kernel has loaded
// (nil: unknown), read when a commit is translated, since loading modules
// is the system's business, not openltm's.
func CongestionAvailable() map[string]bool { return sockopt.Available() }

// listenerOpts gives each running listener its virtual's deferred
// accept, fast open queue and MSS (the client side of its tcp profile),
// TCP_SAVE_SYN when the virtual reads its clients' SYNs (readsSYN) and
// its VLAN list's binding and arrival keeping (arrival also for rules
// that read it, readsLink, for packet filters naming VLANs, and for
// SNATs and NATs with VLAN lists, snatArrival),
// before the new ones start accepting. The caller holds p.mu.
func (p *Plane) listenerOpts(cfg *Config, want map[netip.AddrPort]string) {
	for ap, l := range p.listeners {
		if v := cfg.Virtuals[want[ap]]; v != nil {
			l.ListenOpts(v.ClientTCP, readsSYN(v), v.VLANs, readsLink(v) || p.pf.Arrival() || p.snatArrival)
		}
	}
}

// readsSYN reports whether v's flows read the client's SYN: its tcp
// profile names tcp-options or proxies the MSS, or its rules read the
// SYN's options, TTL or ToS (TCP::option get, IP::ttl, IP::hops,
// IP::tos). Only such a virtual's listener keeps SYNs, so the others'
// connections cost nothing more.
func readsSYN(v *Virtual) bool {
	if v.IsUDP() {
		return false
	}
	if sockopt.SavesSYN(v.ClientTCP, v.ServerTCP) {
		return true
	}
	p := irules.Program(v.Rules)
	return p != nil && p.ReadsSYN()
}

// readsLink reports whether v's rules ask which VLAN a connection came
// in on (LINK::vlan_id): only such a virtual's listener, or one with a
// VLAN list, keeps each connection's arrival interface.
func readsLink(v *Virtual) bool {
	p := irules.Program(v.Rules)
	return !v.IsUDP() && p != nil && p.ReadsLink()
}

// remakeListeners opens anew the listeners whose virtual's mptcp changed
// (a socket's protocol is fixed when it is made): the old one stops
// first, so the address is free, and the new one joins b.fresh to start
// with the others. Connections waiting in the old one's accept queue are
// reset. Should the address not bind again, the virtual is left without
// it and the error logged. The caller holds p.mu.
func (p *Plane) remakeListeners(cfg *Config, b *generation) {
	for _, ap := range b.remake {
		old := p.listeners[ap]
		p.l4.Stop([]*l4.Listener{old})
		delete(p.listeners, ap)
		name := b.want[ap]
		l, err := p.l4.Listen(bindAt(ap, cfg.Virtuals[name]), cfg.Virtuals[name].ClientTCP.WantsMPTCP()) // anyport.go
		if err != nil {
			p.log.Error("cannot listen again", "virtual", name, "address", ap.String(), "error", err)
			continue
		}
		b.fresh[ap] = l
	}
}
