package udp

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/openltm/openltm/dataplane/clone"
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
// sent them or, serverside, as the members get them. Elsewhere it is the
// rule's error, as on a standard virtual. f.mu orders it with end, which
// closes the flow's clone sockets.
func (f *flow) Clone(pool string, member netip.AddrPort, side rules.Side) error {
	if f.rs == nil || f.rs.ev != config.EventClientAccepted {
		return errors.New("only in CLIENT_ACCEPTED")
	}
	p := f.l.e.env.Pools().Named(f.Virtual, pool)
	if p == nil {
		return fmt.Errorf("no such pool: %s", pool)
	}
	set := f.snap.Clone
	if set == nil {
		set = &clone.Set{Counters: &f.vs.Clone}
	}
	d, ok, err := state.RuleCloneDest(p, member, f.snap.Cfg.Destination.Port())
	if err != nil {
		return err
	}
	if !ok {
		set.Counters.Dropped.Add(1)
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended.Load() {
		if d.Done != nil {
			d.Done(false) // the flow ended meanwhile: give the member back
		}
		return nil
	}
	f.clone = set.AddDatagrams(f.clone, d, side == rules.ServerSide)
	return nil
}
