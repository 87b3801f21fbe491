package mblbvs

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// cloneRequest is the engine's Clone: each request of a virtual with
// clone pools goes to a member of each clone pool chosen for it, on a
// connection of its own (dataplane/clone), which ends once the request is
// written. Without clone pools it costs the snapshot's load.
func (mv *VS) cloneRequest(_ netip.AddrPort, received, sent []byte) {
	snap := mv.vs.Snap.Load()
	if snap == nil || snap.Clone == nil {
		return
	}
	f := snap.Clone.Start()
	if f == nil {
		return
	}
	f.Client(received)
	f.Server(sent)
	f.Close()
}

var _ rules.Cloner = (*mblbRules)(nil)

// Clone implements rules.Cloner on http and message-based virtuals: the
// clone command in CLIENT_ACCEPTED, before the client's first request,
// gives the client's requests from then on to one clone member on a
// connection of the client's own, which ends when the client's does: as
// the virtual's clone pools copy them (whole requests, as the client sent
// them or, serverside, as their members get them), but one connection
// for the client rather than one per request [M], so that the clone
// member sees the client's requests in order as on a standard virtual.
// Elsewhere it is the rule's error, as on a standard virtual: the
// engine frames HTTP_REQUEST's request before the rule runs.
func (r *mblbRules) Clone(pool string, member netip.AddrPort, side rules.Side) error {
	if !r.accepting {
		return errors.New("only in CLIENT_ACCEPTED")
	}
	f := r.f
	set, d, ok, err := state.RuleClone(*f.mv.env.Pools(), f.vs, r.snap, f.Virtual, pool, member)
	if !ok {
		return err
	}
	f.ruleClone = set.Add(f.ruleClone, d, side == rules.ServerSide)
	if f.sess != nil {
		f.sess.SetClone(f.cloneRule)
	}
	return nil
}

// cloneRule is the client's engine sessions' clone (SetClone) once a rule
// cloned it.
func (f *mblbFlow) cloneRule(received, sent []byte) {
	f.ruleClone.Client(received)
	f.ruleClone.Server(sent)
}
