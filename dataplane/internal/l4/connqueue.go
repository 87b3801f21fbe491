package l4

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// A flow served by goroutines waits in its pool's connection queue
// (state.ConnQueue) on its own goroutine, blocked in a read readiness
// wait on the client's socket: the client closing or resetting ends the
// wait (it gave up), and a wake from the queue interrupts it by setting
// a read deadline in the past. Nothing polls and no goroutine is added.

// queuedFlow is a goroutine flow's place in a connection queue.
type queuedFlow struct {
	pool   *state.Pool
	w      *state.QueueWaiter
	client *net.TCPConn
	why    atomic.Uint32 // 1 + the QueueWake of a wake not yet seen
	// mu orders a wake's two steps (why, then the deadline) with the
	// waiter's clearing of the deadline, so that no wake's deadline is
	// left on the client once the flow goes on.
	mu sync.Mutex
}

// aLongTimeAgo is a read deadline that has passed: it interrupts a wait.
var aLongTimeAgo = time.Unix(1, 0)

// woken is the waiter's wake: it runs on whoever made room.
func (q *queuedFlow) woken(why state.QueueWake) {
	q.mu.Lock()
	q.why.Store(uint32(why) + 1)
	q.client.SetReadDeadline(aLongTimeAgo)
	q.mu.Unlock()
}

// clearDeadline takes a wake's deadline off the client: always once the
// wake is seen (seen), else only when no wake came meanwhile.
func (q *queuedFlow) clearDeadline(seen bool) {
	q.mu.Lock()
	if seen || q.why.Load() == 0 {
		q.client.SetReadDeadline(time.Time{})
	}
	q.mu.Unlock()
}

// wait blocks until the queue wakes the flow (why) or the client gives up
// (gone).
func (q *queuedFlow) wait() (why state.QueueWake, gone bool) {
	rc, err := q.client.SyscallConn()
	if err != nil {
		return 0, true
	}
	q.clearDeadline(false)
	for {
		closed := false
		err := rc.Read(func(fd uintptr) bool {
			if q.why.Load() != 0 {
				return true
			}
			closed = clientGone(int(fd))
			return closed
		})
		if v := q.why.Load(); v != 0 {
			q.clearDeadline(true)
			q.why.Store(0)
			return state.QueueWake(v - 1), false
		}
		if closed || (err != nil && !errors.Is(err, os.ErrDeadlineExceeded)) {
			return 0, true
		}
		// An interruption whose wake was already seen: wait on.
		q.clearDeadline(false)
	}
}

// queueTurn decides what a goroutine flow does when no member could take
// it (or, newcomer, when connections already wait in its pool's queue):
// it joins the queue (LB_QUEUED runs) or, woken before, goes back to its
// head, and waits. retry is true when the flow should choose again; false
// with a nil error when it gets no place (the client is reset as without
// queueing); errFlowEnded when LB_QUEUED ended it.
func (pr *proxied) queueTurn(qp **queuedFlow, pool *state.Pool, failed []*state.Member, newcomer bool) (retry bool, err error) {
	q := *qp
	if q == nil {
		if !newcomer && !pool.QueueAt(failed) {
			return false, nil
		}
		cfg := pool.Snap.Load().Cfg
		q = &queuedFlow{pool: pool, client: pr.client}
		q.w = state.NewQueueWaiter(q.woken)
		if !pool.Queue.Join(q.w, cfg.QueueDepthLimit, cfg.QueueTimeLimit) {
			return false, nil
		}
		*qp = q
		if pr.rs != nil && pr.handles(config.EventLBQueued) && !pr.runEvent(config.EventLBQueued) {
			pool.Queue.Leave(q.w)
			*qp = nil
			return false, errFlowEnded
		}
		if newcomer && pool.HasRoom() {
			pool.Queue.Kick() // room the queue has not noticed yet
		}
	} else {
		if !q.pool.QueueAt(failed) {
			q.pool.Queue.Done(q.w)
			*qp = nil
			return false, nil
		}
		again, ok := q.pool.Queue.Requeue(q.w)
		if !ok {
			if again == state.WakeRetry {
				return true, nil
			}
			*qp = nil
			return false, nil
		}
	}
	why, gone := q.wait()
	if gone {
		q.pool.Queue.Leave(q.w)
		*qp = nil
		return false, errFlowEnded
	}
	if why != state.WakeRetry {
		*qp = nil
		return false, nil
	}
	return true, nil
}

// queueServed tells the queue a flow woken from it found its member.
func queueServed(qp **queuedFlow) {
	if q := *qp; q != nil {
		q.pool.Queue.Served(q.w)
		*qp = nil
	}
}

// queueLeave gives up a flow's place when it ends while woken (an error
// before it found its member).
func queueLeave(qp **queuedFlow) {
	if q := *qp; q != nil {
		q.pool.Queue.Done(q.w)
		*qp = nil
	}
}

// queuesFirst reports whether a new flow joins pool's queue before
// choosing: connections already wait there, and it may not overtake them.
func queuesFirst(pool *state.Pool, want bool) bool {
	if pool == nil || want {
		return false
	}
	s := pool.Snap.Load()
	return s != nil && s.Cfg.QueueOnConnLimit && pool.Queue.Waiting()
}
