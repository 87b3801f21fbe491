package l4

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules"
)

// mrfDiameterPersist applies DIAMETER::persist's sub-commands to m: use,
// replace, bypass or ignore and timeout to a request's routing; a delete
// action set over a request waits for its answer, one set over an answer
// (in DIAMETER_EGRESS) acts on it at once.
func mrfDiameterPersist(m *mrf.Message, out rules.DiameterOutcome) {
	if mode, ok := mrf.ParsePersistMode(out.PersistMode); ok && !m.Answer {
		m.PersistMode = mode
	}
	if out.PersistTimeout > 0 && !m.Answer {
		m.PersistTTL = out.PersistTimeout
	}
	d, ok := mrf.ParsePersistDelete(out.PersistDelete)
	if !ok {
		return
	}
	if !m.Answer {
		m.PersistDelete = d
		return
	}
	if o := m.Originator(); o != nil && m.Persist != "" {
		o.Router().Settle(m, d)
	}
}

// HoldMember takes a peer's member out of load balancing after the peer
// said it leaves (a Diameter DPR with disconnect-peer-action):
// LeaveDisable disables it as a monitor's recv-disable does (persisted
// and rule-named requests only) until its monitors next report, and
// LeaveOffline marks it down as LB::down does, until a probe or LB::up
// marks it up [M: F5 documents the actions, not for how long; openltm
// holds the member at run time, its configuration unchanged].
func (x *mrfEnv) HoldMember(pool string, addr netip.AddrPort, a mrf.LeaveAction) {
	p := x.pool(pool)
	if p == nil {
		return
	}
	m := state.MemberAt(p, addr)
	if m == nil {
		return
	}
	switch a {
	case mrf.LeaveDisable:
		m.Watch.Disabled.Store(true)
	case mrf.LeaveOffline:
		m.Watch.Mark(false)
	}
}
