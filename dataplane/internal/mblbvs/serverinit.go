package mblbvs

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// SERVER_INIT on message-based and HTTP virtuals: the engine asks
// (mblb.Config.ServerInit) before each server connection a client's
// message opens, never for one OneConnect lends it, so the event runs
// once per member connection as BIG-IP raises it once per server-side
// flow. The rule sees the member chosen (LB::server) and may set that
// connection's source (snat, snatpool); its choice is kept by client
// address until the dial that follows on the same goroutine takes it.

// errServerInit ends a connect whose SERVER_INIT ended the client.
var errServerInit = errors.New("SERVER_INIT ended the client")

// serverInit is the engine's ServerInit: a bit test for a client whose
// rules do not handle the event.
func (mv *VS) serverInit(tag any, client netip.AddrPort, m mblb.Member) error {
	f, ok := tag.(*mblbFlow)
	if !ok || f.rr == nil || !f.rr.rules.Handles(config.EventServerInit) {
		return nil
	}
	return f.rr.serverInit(client, m)
}

// initChoice is a client's SERVER_INIT snat or snatpool decision, kept
// (initSrc) until the dial that follows takes it: the source is chosen
// there, its ltm snat-translation counted and held by the connection
// as the virtual's own would be (sourceHeld).
type initChoice struct {
	snat state.SNATChoice
	// local is the address the client reached (automap's fallback).
	local netip.AddrPort
}

// ruleSource is how a server connection to m for client takes its
// source when its SERVER_INIT chose one (init non-nil: snat, snatpool)
// or translate-address decides it (src, true); else the virtual's
// source-address-translation decides (sourceHeld).
func (mv *VS) ruleSource(snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (src netip.AddrPort, init *initChoice, rule bool) {
	if client.IsValid() {
		if v, ok := mv.initSrc.LoadAndDelete(client); ok {
			return netip.AddrPort{}, v.(*initChoice), true
		}
	}
	if !snap.Cfg.TranslateAddress && reachesMany(snap.Cfg) {
		if _, ok := m.Ref.(*state.Member); ok {
			// translate-address disabled on a virtual of every port (or
			// many addresses): the member is where the client was going,
			// an address of this host (the steering sees only those). The
			// connection leaves from it, as an ip-forward virtual's does
			// [M], so that the steering passes it over and it reaches
			// the address's own listener, not the virtual again.
			return netip.AddrPortFrom(m.Addr.Addr(), 0), nil, true
		}
	}
	return netip.AddrPort{}, nil, false
}

// serverInit runs SERVER_INIT for a connection to m about to be made:
// LB::server names m; a snat or snatpool decision sets its source
// (chosen at the dial, as on a standard virtual). A Tcl error, reject or
// drop there ends the client (goOn) and the connect with it.
func (r *mblbRules) serverInit(client netip.AddrPort, m mblb.Member) error {
	r.mu.Lock()
	r.server = m.Addr
	r.init = &irules.Target{}
	err := r.runHandled(config.EventServerInit, nil)
	t := r.init
	r.init = nil
	r.server = netip.AddrPort{}
	v := r.verdict
	r.verdict = irules.GoOn
	r.mu.Unlock()
	if !r.goOn(err, v) {
		return errServerInit
	}
	if t.SNAT.Set {
		r.f.mv.initSrc.Store(client, &initChoice{snat: t.SNAT, local: r.f.Local}) // chosen and held at the dial (snathold.go)
	}
	return nil
}

// initDecide is Decide during SERVER_INIT: the member is chosen and
// being connected to, so only the connection's source may change [M: as
// on a standard virtual, choosing again there is the rule's error].
func (r *mblbRules) initDecide(d rules.Decision) error {
	switch d.Kind {
	case rules.DecideSnat, rules.DecideSnatAuto, rules.DecideSnatNone, rules.DecideSnatPool:
		snatPool := r.f.mv.env.SnatPool
		if snatPool == nil {
			snatPool = func(string) ([]netip.Addr, bool) { return nil, false }
		}
		_, err := r.init.Decide(d, *r.f.mv.env.Pools(), r.f.Virtual, r.f.Local, snatPool)
		return err
	case rules.DecideReject:
		r.verdict = irules.Reject
		return nil
	case rules.DecideDrop, rules.DecideDiscard:
		r.verdict = irules.Drop
		return nil
	}
	return fmt.Errorf("%s is not valid in SERVER_INIT: the member is chosen already (use LB_SELECTED)", d.Kind)
}
