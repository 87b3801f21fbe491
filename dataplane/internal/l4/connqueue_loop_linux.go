//go:build linux

package l4

import (
	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// A plain flow on an event loop waits in its pool's connection queue
// (state.ConnQueue) with its client's socket registered in the loop: a
// reset or an empty close of the client ends the wait (it gave up), and a
// wake from the queue is posted to the loop, which chooses again. Nothing
// polls.

// loopQueued is a loop flow's place in a connection queue.
type loopQueued struct {
	pool *state.Pool
	w    *state.QueueWaiter
}

// What queueTurn decided.
type queueStep uint8

const (
	queueFail  queueStep = iota // no place: the client is reset
	queueWait                   // the flow waits; a wake goes on
	queueRetry                  // choose again now
)

// queueTurn is connectNext's answer to no member with room (or, newcomer,
// to connections already waiting in pool's queue): join the queue, or go
// back to its head after a wake that found no room.
func (lf *loopFlow) queueTurn(pool *state.Pool, newcomer bool) queueStep {
	q := lf.lq
	if q == nil {
		if !newcomer && !pool.QueueAt(lf.failed) {
			return queueFail
		}
		cfg := pool.Snap.Load().Cfg
		q = &loopQueued{pool: pool}
		lr := lf.lr
		q.w = state.NewQueueWaiter(func(why state.QueueWake) {
			lr.Post(func() { lf.dequeued(q, why) })
		})
		if !pool.Queue.Join(q.w, cfg.QueueDepthLimit, cfg.QueueTimeLimit) {
			return queueFail
		}
		lf.lq = q
		if newcomer && pool.HasRoom() {
			pool.Queue.Kick()
		}
	} else {
		if !q.pool.QueueAt(lf.failed) {
			lf.queueDone()
			return queueFail
		}
		again, ok := q.pool.Queue.Requeue(q.w)
		if !ok {
			if again == state.WakeRetry {
				return queueRetry
			}
			lf.lq = nil
			return queueFail
		}
	}
	// Watch the client meanwhile: its reset or close says it gave up.
	if lf.ctok == 0 {
		tok, err := lf.lr.Add(lf.cfd, rawsock.Events, lf, tagClient)
		if err != nil {
			lf.queueDone()
			return queueFail
		}
		lf.ctok = tok
	}
	return queueWait
}

// dequeued runs on the loop when the queue wakes the flow.
func (lf *loopFlow) dequeued(q *loopQueued, why state.QueueWake) {
	if lf.closed || lf.lq != q {
		return
	}
	if lf.ctok != 0 {
		lf.lr.Remove(lf.cfd, lf.ctok) // established registers it again
		lf.ctok = 0
	}
	if why != state.WakeRetry {
		lf.lq = nil
		lf.fail()
		return
	}
	lf.connectNext()
}

// queuedEvent handles an event of a waiting flow's client.
func (lf *loopFlow) queuedEvent(ev uint32) {
	if ev&(evloop.Err|evloop.Hup) != 0 || (ev&evloop.RdHup != 0 && clientGone(lf.cfd)) {
		lf.queueGone()
		lf.abort(true)
	}
}

// queueServed tells the queue the flow found its member.
func (lf *loopFlow) queueServed() {
	if q := lf.lq; q != nil {
		q.pool.Queue.Served(q.w)
		lf.lq = nil
	}
}

// queueDone lets go of the flow's place without it being served.
func (lf *loopFlow) queueDone() {
	if q := lf.lq; q != nil {
		q.pool.Queue.Done(q.w)
		lf.lq = nil
	}
}

// queueGone takes a flow that ends while waiting (the client gave up,
// idle, deleted) out of its queue.
func (lf *loopFlow) queueGone() {
	if q := lf.lq; q != nil {
		q.pool.Queue.Leave(q.w)
		lf.lq = nil
	}
}
