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

// combined is a member's monitor status with its node's: down when the
// node's monitors say so, the member's own otherwise, as a member's
// availability takes its node's when that is worse.
func combined(own, node state.MonStatus) state.MonStatus {
	if node == state.MonDown {
		return state.MonDown
	}
	return own
}

// nodeStatus is the node's monitor status, unchecked without a node.
func nodeStatus(m *state.Member) state.MonStatus {
	if m.Node == nil || m.Node.Watch == nil {
		return state.MonUnchecked
	}
	return m.Node.Watch.Current()
}

// poolUp counts the pool's members whose monitors, with their nodes',
// are up.
func poolUp(p *state.Pool) int {
	up := 0
	if snap := p.Snap.Load(); snap != nil {
		for _, o := range snap.Members {
			if combined(o.Watch.Current(), nodeStatus(o)) == state.MonUp {
				up++
			}
		}
	}
	return up
}

// tellMemberStatus hands a member's change to the hook, if one is set:
// the member's own monitors' change, seen with its node's (a change
// under a node that is down changes nothing the hook is told of).
func (p *Plane) tellMemberStatus(m *state.Member, old, now state.MonStatus) {
	h := p.memberHook.Load()
	if h == nil {
		return
	}
	ns := nodeStatus(m)
	old, now = combined(old, ns), combined(now, ns)
	if old == now {
		return
	}
	up := poolUp(m.Pool)
	was := up
	if now == state.MonUp {
		was--
	}
	if old == state.MonUp {
		was++
	}
	(*h)(MemberStatus{Pool: m.Pool.Name, Member: m.Name, Old: old.String(), New: now.String(), PoolWasUp: was > 0, PoolUp: up > 0})
}

// tellNodeStatus hands the hook the change of each member of node n
// whose status its node's monitors changed (going down, or coming back
// to the member's own), a pool's at a time so that the pool's own
// change is told once, with its last member's.
func (p *Plane) tellNodeStatus(n *state.Node, old, now state.MonStatus) {
	h := p.memberHook.Load()
	if h == nil || (old == state.MonDown) == (now == state.MonDown) {
		return
	}
	type change struct {
		m        *state.Member
		from, to state.MonStatus
	}
	byPool := map[*state.Pool][]change{}
	var order []*state.Pool
	p.mu.Lock()
	for _, m := range p.members {
		if m.Node != n {
			continue
		}
		own := m.Watch.Current()
		from, to := combined(own, old), combined(own, now)
		if from == to {
			continue
		}
		if _, ok := byPool[m.Pool]; !ok {
			order = append(order, m.Pool)
		}
		byPool[m.Pool] = append(byPool[m.Pool], change{m, from, to})
	}
	p.mu.Unlock()
	for _, pool := range order {
		cs := byPool[pool]
		up := poolUp(pool)
		// Where the pool stood before its members' changes, then each
		// change in turn.
		cur := up
		for _, c := range cs {
			if c.to == state.MonUp {
				cur--
			}
			if c.from == state.MonUp {
				cur++
			}
		}
		for _, c := range cs {
			was := cur
			if c.from == state.MonUp {
				cur--
			}
			if c.to == state.MonUp {
				cur++
			}
			(*h)(MemberStatus{Pool: pool.Name, Member: c.m.Name, Old: c.from.String(), New: c.to.String(), PoolWasUp: was > 0, PoolUp: cur > 0})
		}
	}
}
