package dataplane

import (
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// MemberStatus is one change of a pool member's monitor status, handed
// to the hook SetMemberStatusHook installs: the daemon raises iCall's
// built-in pool and member events from it, so a script reacts to the
// change itself rather than polling show ltm pool.
type MemberStatus struct {
	// Pool is the pool's full name, Member the member's as list shows
	// it (/Common/NODE:PORT).
	Pool, Member string
	// Old and New are the member's monitor status before and after:
	// up, down, checking or unchecked.
	Old, New string
	// PoolWasUp and PoolUp say whether some member of the pool had its
	// monitors up before the change, and has after it; read without a
	// lock, so two members changing at the same moment may both report
	// the pool's change.
	PoolWasUp, PoolUp bool
}

// memberHook is the installed hook; nil: none, and a status change
// costs one load.
type memberHook = atomic.Pointer[func(MemberStatus)]

// SetMemberStatusHook makes fn get every pool member's monitor status
// change, called from the monitor's goroutine after the plane has acted
// on it; nil removes it. fn must not block nor call back into the plane.
func (p *Plane) SetMemberStatusHook(fn func(MemberStatus)) {
	if fn == nil {
		p.memberHook.Store(nil)
		return
	}
	p.memberHook.Store(&fn)
}

// tellMemberStatus hands a member's change to the hook, if one is set.
func (p *Plane) tellMemberStatus(m *state.Member, old, now state.MonStatus) {
	h := p.memberHook.Load()
	if h == nil {
		return
	}
	up := 0
	if snap := m.Pool.Snap.Load(); snap != nil {
		for _, o := range snap.Members {
			if o.Watch.Current() == state.MonUp {
				up++
			}
		}
	}
	was := up
	if now == state.MonUp {
		was--
	}
	if old == state.MonUp {
		was++
	}
	(*h)(MemberStatus{Pool: m.Pool.Name, Member: m.Name, Old: old.String(), New: now.String(), PoolWasUp: was > 0, PoolUp: up > 0})
}
