package udp

import (
	"errors"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/rulelisten"
	"github.com/openltm/openltm/rules"
)

// relatedIdle is a UDP related listener's idle timeout when the virtual
// has none [M: the udp profile's default].
const relatedIdle = 60 * time.Second

// Listen implements rules.ListenConn on a UDP virtual: a rule's listen
// with proto 17 opens a related UDP listener (rulelisten.OpenUDP) on the
// virtual's address unless it names one, whose first allowed peer's
// datagrams go to the rule's server from the virtual's SNAT source,
// until both sides are quiet for the virtual's idle timeout (its timer
// policy's rule for udp and the port the peer reached on the listener,
// when it has one [M]); the relay
// is a flow of the connection table, counted in the virtual's Ephemeral
// column [M]. A TCP
// listener needs the TCP proxy, which a UDP virtual's flows do not have
// [M: refused with a Tcl error].
func (f *flow) Listen(spec rules.ListenSpec) (netip.AddrPort, error) {
	if spec.Proto != 17 {
		return netip.AddrPort{}, errors.New("a UDP virtual server's rules open UDP listeners (proto 17) only")
	}
	bind := spec.Bind
	if !bind.Addr().IsValid() {
		bind = netip.AddrPortFrom(f.Local.Addr(), bind.Port())
	}
	vs, snap, local, server := f.vs, f.snap, f.Local, spec.Server
	idle := snap.Idle
	if idle <= 0 {
		idle = relatedIdle
	}
	rs := rulelisten.Spec{Bind: bind, Allow: spec.Allow, AllowPort: spec.AllowPort, Timeout: spec.Timeout,
		Arrival: snap.SNATArrival} // a VLAN-limited SNAT or NAT: the first datagram's arrival read
	if snap.Cfg.Timers != nil { // the virtual's timer policy's rule for udp and the listener's port
		rs.IdleAt = func(at netip.AddrPort) time.Duration { return snap.RelatedIdle(17, at.Port(), idle) }
	}
	l, err := rulelisten.OpenUDP(rs, server,
		func(peer netip.AddrPort, ifx int) rulelisten.Source {
			h := state.SNATSourceHeldOn(vs, snap, peer, local, server, nil, nil, ifx) // held while the relay lasts
			return rulelisten.Source{Src: h.Src, Hold: h.Hold, Err: h.Err, Strict: h.Strict}
		}, idle, &rulelisten.Track{Table: f.l.e.env.Table, Virtual: vs.Name, Counts: &vs.Ephemeral})
	if err != nil {
		return netip.AddrPort{}, err
	}
	return l.Addr(), nil
}
