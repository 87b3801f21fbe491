package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// maxLBSelectedRounds bounds how many times LB_SELECTED may send one
// message elsewhere, as the L4 path bounds its rounds: a rule that keeps
// choosing another target has its last choice taken.
const maxLBSelectedRounds = 3

// selected runs LB_SELECTED for m, the member chosen for one message,
// and follows a pool, member or node decision made there (`pool`,
// `pool p member a p`, `node`, `LB::reselect`): the message
// goes to the new target instead, and LB_SELECTED runs again for the new
// choice (LB::server names it there). Only virtuals whose rules handle
// LB_SELECTED come here.
func (mv *VS) selected(c mblb.Choice, r *mblbRules, m mblb.Member) (mblb.Member, error) {
	for round := 0; ; round++ {
		t, ok := r.lbSelected(m.Addr, m.Pool)
		if !ok {
			return mblb.Member{}, mblb.ErrNoMember
		}
		if t.IsZero() || round == maxLBSelectedRounds || mv.holds(t, m) {
			return m, nil
		}
		mv.unpicked(c, m)
		c.Target, c.Stay, c.Cookie = t, false, false
		nm, err := mv.choose(c)
		if err != nil {
			// The new target cannot take it: LB_FAILED, as for a first
			// choice.
			return mv.picked(c, nm, err)
		}
		mv.pickedFor(c, nm)
		m = nm
	}
}

// holds reports whether the target a rule named in LB_SELECTED is the
// member already chosen: its node, its pool member, or a pool (the
// virtual's own for a bare LB::reselect) that the member belongs to
// [M: no new balancing then].
func (mv *VS) holds(t mblb.Target, m mblb.Member) bool {
	sm, isMember := m.Ref.(*state.Member)
	if t.Node {
		if isMember {
			return false
		}
		if t.Member.Port() == 0 {
			return t.Member.Addr() == m.Addr.Addr()
		}
		return t.Member == m.Addr
	}
	if !isMember {
		return false
	}
	if t.Pool != sm.Pool.Name && (t.Pool != "" || mv.vs.Snap.Load().Pool != sm.Pool) {
		return false
	}
	return !t.Member.IsValid() || t.Member == sm.Cfg.Load().Addr
}

// unpicked takes back what the choice of m counted and recorded, when
// LB_SELECTED sends the message elsewhere: the member's, its pool's and
// node's requests, and a persistence record naming m in its pool (made
// by this choice or an earlier one), so that counters and records follow
// the member the message goes to, as on the L4 path.
func (mv *VS) unpicked(c mblb.Choice, m mblb.Member) {
	sm, ok := m.Ref.(*state.Member)
	if !ok {
		return // a node: nothing counted, nothing recorded
	}
	sm.Stats.Requests.Add(^uint64(0))
	sm.Pool.Stats.Requests.Add(^uint64(0))
	sm.Node.Stats.Requests.Add(^uint64(0))
	ks, n := mv.persistKeys(mv.vs.Snap.Load(), sm.Pool, c)
	addr := sm.Cfg.Load().Addr
	for i := 0; i < n; i++ {
		if pool, a, found := mv.env.PersistLookup(ks[i]); found && pool == sm.Pool.Name && a == addr {
			mv.env.PersistDelete(ks[i])
		}
	}
}

// pickedFor records the member a rule sent the message to in
// LB_SELECTED under its pool's persistence keys, as the L4 path records
// the member it connects to; a node has no record.
func (mv *VS) pickedFor(c mblb.Choice, m mblb.Member) {
	sm, ok := m.Ref.(*state.Member)
	if !ok {
		return
	}
	ks, n := mv.persistKeys(mv.vs.Snap.Load(), sm.Pool, c)
	mv.persistRecord(&ks, n, sm.Pool, sm)
}
