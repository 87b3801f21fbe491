package udp

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

var _ rules.Cloner = (*flow)(nil)

// Clone implements rules.Cloner on UDP virtuals: the clone command in
// CLIENT_ACCEPTED, which runs on the flow's own goroutine before its
// first datagram, adds a clone socket to the flow's (those of the
// virtual's clone pools, if any): its datagrams from then on are copied
// to the clone member as the UDP clone pools copy them, as the client
// sent them or, serverside, as the members get them. On a
// message-routing virtual (sip, generic) a clone in the ingress events
// of a client's message (the protocol's and MR_INGRESS), run on the
// goroutine that reads the client (rs.mrIn, mrf.go), adds one that
// starts with that datagram, then each later one, as the client sent
// them on either side, as the flow's clone pools copy them there [M:
// BIG-IP's clone is a setting of the connection from the command on].
// Elsewhere it is skipped and counted as dropped, as on a standard
// virtual (the commit warned). f.mu orders it with end, which closes
// the flow's clone sockets; the goroutine reading the client, the
// other reader of f.clone, is the one running the event.
func (f *flow) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	msg := f.rs != nil && f.rs.mrIn != nil && ev != rules.ClientAccepted
	if !msg && (ev != rules.ClientAccepted || f.rs == nil || f.rs.ev != config.EventClientAccepted) {
		f.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	set, d, ok, err := state.RuleClone(f.l.e.env.Pools(), f.vs, f.snap, f.Virtual, pool, member)
	if !ok {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended.Load() {
		if d.Done != nil {
			d.Done(false) // the flow ended meanwhile: give the member back
		}
		return nil
	}
	if msg {
		g := set.AddDatagrams(nil, d, side == rules.ServerSide)
		g.Both(f.rs.mrIn)
		f.clone = f.clone.Join(g)
		return nil
	}
	f.clone = set.AddDatagrams(f.clone, d, side == rules.ServerSide)
	return nil
}
