package mblbvs

import (
	"errors"
	"sync"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// A pool's connection queue on a message-balanced virtual: a request
// (not a client connection) that finds every member of its pool at its
// connection limit waits in the pool's queue (state.ConnQueue, the one
// L4 connections wait in) until a member connection frees: a OneConnect
// connection going back idle, or a server connection closing. The engine
// parks the request (mblb.Queued); its ticket here holds the waiter.

// msgTicket is one request's place in a pool's connection queue.
type msgTicket struct {
	pool *state.Pool
	w    *state.QueueWaiter

	mu        sync.Mutex
	resume    func() // the engine's, while parked
	early     bool   // a wake came before Park
	cancelled bool
}

// wake is the waiter's wake: the engine sends the request again, and
// its Pick reads from the queue what the wake meant.
func (t *msgTicket) wake(state.QueueWake) {
	t.mu.Lock()
	if t.cancelled {
		t.mu.Unlock()
		return
	}
	r := t.resume
	t.resume = nil
	if r == nil {
		t.early = true
	}
	t.mu.Unlock()
	if r != nil {
		r()
	}
}

// Park implements mblb.QueueTicket.
func (t *msgTicket) Park(resume func()) {
	t.mu.Lock()
	if t.cancelled {
		t.mu.Unlock()
		return
	}
	if t.early {
		t.early = false
		t.mu.Unlock()
		resume()
		return
	}
	t.resume = resume
	t.mu.Unlock()
}

// Cancel implements mblb.QueueTicket: the client went away while its
// request waited (counted Abandoned).
func (t *msgTicket) Cancel() {
	t.mu.Lock()
	t.cancelled = true
	t.resume = nil
	t.mu.Unlock()
	t.pool.Queue.Leave(t.w)
}

// queues reports whether pool holds requests at its connection limit.
func queues(pool *state.Pool) (*config.Pool, bool) {
	if pool == nil {
		return nil, false
	}
	s := pool.Snap.Load()
	if s == nil || !s.Cfg.QueueOnConnLimit {
		return nil, false
	}
	return s.Cfg, true
}

// queuePool is the pool a request would wait in: the one it is balanced
// in (the virtual's, or one a rule named); none for a rule's member or
// node, or a connection that stays with its member.
func (mv *VS) queuePool(c mblb.Choice) *state.Pool {
	t := c.Target
	if c.Stay || t.Node || t.Member.IsValid() {
		return nil
	}
	pool := mv.vs.Snap.Load().Pool
	if t.Pool != "" && (pool == nil || t.Pool != pool.Name) {
		pool = mv.env.Pools().Named(mv.vs.Name, t.Pool)
	}
	return pool
}

// excludedMembers are the pool's members a request must not go to.
func excludedMembers(pool *state.Pool, ids []mblb.MemberID) []*state.Member {
	if len(ids) == 0 {
		return nil
	}
	ps := pool.Snap.Load()
	if ps == nil {
		return nil
	}
	var out []*state.Member
	for _, m := range ps.Members {
		if excludedID(ids, memberID(m)) {
			out = append(out, m)
		}
	}
	return out
}

// full reports whether m has no room for a request under its
// connection limit (the negation of room).
func (mv *VS) full(m *state.Member) bool {
	if mv.room != nil {
		return !mv.room(m)
	}
	return m.AtConnectionLimit()
}

// joinQueue puts a request in pool's queue: a new ticket, or nil when
// the queue refuses it (its depth limit).
func (mv *VS) joinQueue(pool *state.Pool, cfg *config.Pool) *msgTicket {
	t := &msgTicket{pool: pool}
	t.w = state.NewQueueWaiter(t.wake)
	if !pool.Queue.Join(t.w, cfg.QueueDepthLimit, cfg.QueueTimeLimit) {
		return nil
	}
	return t
}

// queued runs the client's LB_QUEUED for a request that joined the
// queue; false when the rule ended the client, whose request then
// leaves the queue.
func queued(c mblb.Choice, tk *msgTicket) bool {
	f, ok := c.Tag.(*mblbFlow)
	if !ok || f.rr == nil || f.rr.lbQueued() {
		return true
	}
	tk.pool.Queue.Leave(tk.w)
	return false
}

// pickQueued is pick with the pool's connection queue: a request behind
// waiting ones joins the queue before choosing; one no member has room
// for joins it (or, woken, goes back to its head); a woken one that is
// served settles its place.
func (mv *VS) pickQueued(c mblb.Choice) (mblb.Member, error) {
	tk, _ := c.Ticket.(*msgTicket)
	refused := false // the queue is at its depth limit
	if tk == nil && state.AnyQueued() {
		pool := mv.queuePool(c)
		if cfg, ok := queues(pool); ok && pool.Queue.Waiting() {
			// Requests wait already: no overtaking them.
			if tk = mv.joinQueue(pool, cfg); tk != nil {
				if !queued(c, tk) {
					return mblb.Member{}, mblb.ErrNoMember
				}
				if pool.HasRoomWith(mv.room) {
					pool.Queue.Kick() // room the queue has not noticed yet
				}
				return mblb.Member{}, &mblb.Queued{Ticket: tk}
			}
			refused = true // as without queueing
		}
	}
	for tries := 0; ; tries++ {
		m, err := mv.choose(c)
		if err == nil {
			if tk != nil {
				tk.pool.Queue.Took(tk.w)
			}
			return mv.picked(c, m, nil)
		}
		if !errors.Is(err, mblb.ErrNoMember) || refused || tries >= 8 {
			if tk != nil {
				tk.pool.Queue.Done(tk.w)
			}
			return mv.picked(c, m, err)
		}
		pool := mv.queuePool(c)
		if tk != nil {
			pool = tk.pool
		}
		cfg, ok := queues(pool)
		if !ok || !pool.QueueAtWith(excludedMembers(pool, c.Exclude), mv.full) {
			if tk != nil {
				tk.pool.Queue.Done(tk.w)
			}
			return mv.picked(c, m, err)
		}
		if tk == nil {
			if tk = mv.joinQueue(pool, cfg); tk == nil {
				return mv.picked(c, m, err) // the queue is at its depth limit
			}
			if !queued(c, tk) {
				return mblb.Member{}, mblb.ErrNoMember
			}
			return mblb.Member{}, &mblb.Queued{Ticket: tk}
		}
		again, waits := pool.Queue.Requeue(tk.w)
		if waits {
			return mblb.Member{}, &mblb.Queued{Ticket: tk}
		}
		if again != state.WakeRetry {
			return mv.picked(c, m, err) // its time or the queue is up
		}
		// Room was made while it chose: choose again.
	}
}

// oneConnectLimits makes the engine's OneConnect respect the members'
// connection limits as limit-type says (none: only busy connections
// count, so an idle one may be reused or another opened beside it;
// idle: every connection counts, and an idle one is closed to make room;
// strict: every connection counts), and has a connection going back
// idle wake the pool's queue. room is what the balancing then asks of a
// member.
func (mv *VS) oneConnectLimits(oc *mblb.OneConnect, limitType string) {
	byBusy := limitType == "" || limitType == "none"
	oc.CloseIdle = limitType == "idle"
	oc.MayOpen = func(m mblb.Member, idle, dialing int) bool {
		rt, ok := m.Ref.(*state.Member)
		if !ok {
			return true
		}
		if byBusy {
			return !rt.AtConnectionLimitBeyond(int64(idle - dialing))
		}
		return !rt.AtConnectionLimitBeyond(int64(-dialing))
	}
	oc.Limited = func(m mblb.Member) bool {
		rt, ok := m.Ref.(*state.Member)
		return ok && (rt.Cfg.Load().ConnectionLimit > 0 || rt.Node.Cfg.Load().ConnectionLimit > 0)
	}
	oc.Idle = func(m mblb.Member) {
		if rt, ok := m.Ref.(*state.Member); ok {
			rt.SlotFreed()
		}
	}
	mv.room = func(m *state.Member) bool {
		if !m.AtConnectionLimit() {
			return true
		}
		idle := mv.eng.IdleConns(memberID(m))
		if byBusy {
			return !m.AtConnectionLimitBeyond(int64(idle))
		}
		return idle > 0
	}
}
