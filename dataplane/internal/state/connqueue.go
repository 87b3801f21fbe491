package state

import (
	"sync"
	"sync/atomic"
	"time"
)

// A pool's connection queue (queue-on-connection-limit): when every
// usable member of the pool (or its node) is at its connection limit, a
// new client connection waits here in arrival order instead of being
// reset, and is balanced as usual once a member has room. Nothing polls:
// the release of a member's connection (Member.Release), a commit and a
// member coming up wake the head of the queue (Kick), which chooses
// again and, when it still finds no room, goes back to the front. The
// queue's depth and time limits reset the connections beyond them.
//
// The queue lives in the pool's runtime (Pool.Queue) and survives
// commits; its zero value is an empty queue, so a pool without queueing
// costs nothing, and the release of a connection reads one atomic counter
// (queuedTotal) to learn that no queue anywhere waits.

// QueueClock is the queue's clock: when a connection joined and when its
// time limit ends. Tests give their own to decide when a limit passes.
type QueueClock interface {
	// Now is the time in nanoseconds.
	Now() int64
	// AfterFunc runs f after d, unless the stop function it returns is
	// called first (reporting whether it stopped f).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// realClock is the monotonic clock and the runtime's timers.
type realClock struct{}

var clockEpoch = time.Now()

func (realClock) Now() int64 { return int64(time.Since(clockEpoch)) }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// QueueWake is why a waiting connection is woken.
type QueueWake uint8

const (
	// WakeRetry: a member may have room; choose again, and Requeue (or
	// Served, or Done) the waiter.
	WakeRetry QueueWake = iota
	// WakeExpired: queue-time-limit passed; the connection is reset.
	WakeExpired
	// WakeDropped: the queue is gone or shrank (pool deleted, queueing
	// turned off, depth limit lowered); the connection is reset.
	WakeDropped
)

// QueueWaiter is one connection in (or just woken from) a queue. Its wake
// function runs once per wake, outside the queue's lock, on whatever
// goroutine released the slot: it hands the news to the connection's own
// goroutine or event loop and does nothing else.
type QueueWaiter struct {
	prev, next *QueueWaiter
	since      int64 // when it joined (the queue's clock)
	stop       func() bool
	listed     bool // in the queue's list
	held       bool // joined and not yet served nor done
	expired    bool // the time limit passed while it was out choosing
	wake       func(QueueWake)
}

// NewQueueWaiter makes the waiter of one connection; wake is how the
// connection learns it may go on (see QueueWaiter).
func NewQueueWaiter(wake func(QueueWake)) *QueueWaiter { return &QueueWaiter{wake: wake} }

// ConnQueue is one pool's queue of connections waiting for a member with
// room, and its statistics.
type ConnQueue struct {
	mu         sync.Mutex
	head, tail *QueueWaiter
	depth      int  // listed waiters
	out        int  // waiters woken and choosing
	missed     int  // kicks that found no listed waiter while some were out
	closed     bool // the pool was deleted
	clock      QueueClock
	active     bool // in activeQueues

	// Statistics (connq): ages in nanoseconds of the queue's clock.
	serviced, abandoned, expired, dropped uint64
	ageMax, ageEMA, ageEDM                int64
}

// queuedTotal counts the connections held by every queue (listed or out
// choosing): while it is zero, a released connection wakes nothing.
var queuedTotal atomic.Int64

// activeQueues are the queues holding connections, for the releases that
// concern every pool (a node's connection limit is shared by the members
// of all pools on it).
var activeQueues struct {
	sync.Mutex
	set map[*ConnQueue]struct{}
}

// SetClock replaces the queue's clock (tests); nil restores the real one.
func (q *ConnQueue) SetClock(c QueueClock) {
	q.mu.Lock()
	q.clock = c
	q.mu.Unlock()
}

func (q *ConnQueue) now() int64 {
	if q.clock == nil {
		return realClock{}.Now()
	}
	return q.clock.Now()
}

func (q *ConnQueue) afterFunc(d time.Duration, f func()) func() bool {
	if q.clock == nil {
		return realClock{}.AfterFunc(d, f)
	}
	return q.clock.AfterFunc(d, f)
}

// hold counts a waiter joining (q.mu held).
func (q *ConnQueue) hold(w *QueueWaiter) {
	w.held = true
	queuedTotal.Add(1)
	if !q.active {
		q.active = true
		activeQueues.Lock()
		if activeQueues.set == nil {
			activeQueues.set = map[*ConnQueue]struct{}{}
		}
		activeQueues.set[q] = struct{}{}
		activeQueues.Unlock()
	}
}

// unhold counts a waiter leaving for good (q.mu held).
func (q *ConnQueue) unhold(w *QueueWaiter) {
	if !w.held {
		return
	}
	w.held = false
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	queuedTotal.Add(-1)
	if q.active && q.depth == 0 && q.out == 0 {
		q.active = false
		q.missed = 0
		activeQueues.Lock()
		delete(activeQueues.set, q)
		activeQueues.Unlock()
	}
}

func (q *ConnQueue) pushBack(w *QueueWaiter) {
	w.prev, w.next, w.listed = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
	q.depth++
}

func (q *ConnQueue) pushFront(w *QueueWaiter) {
	w.prev, w.next, w.listed = nil, q.head, true
	if q.head != nil {
		q.head.prev = w
	} else {
		q.tail = w
	}
	q.head = w
	q.depth++
}

func (q *ConnQueue) unlink(w *QueueWaiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.listed = nil, nil, false
	q.depth--
}

// Join puts w at the end of the queue, unless depthLimit (> 0)
// connections already wait there (then it returns false and counts the
// connection as dropped) or the pool is gone. timeLimit (> 0) starts the
// connection's time limit, after which it is woken with WakeExpired.
func (q *ConnQueue) Join(w *QueueWaiter, depthLimit int, timeLimit time.Duration) bool {
	q.mu.Lock()
	if q.closed || (depthLimit > 0 && q.depth >= depthLimit) {
		q.dropped++
		q.mu.Unlock()
		return false
	}
	w.since, w.expired = q.now(), false
	q.pushBack(w)
	q.hold(w)
	if timeLimit > 0 {
		w.stop = q.afterFunc(timeLimit, func() { q.expire(w) })
	}
	q.mu.Unlock()
	return true
}

// expire ends w's wait at its time limit: at once when it is listed, when
// it comes back (Requeue) when it is out choosing.
func (q *ConnQueue) expire(w *QueueWaiter) {
	q.mu.Lock()
	if !w.held {
		q.mu.Unlock()
		return
	}
	w.stop = nil
	if !w.listed {
		w.expired = true
		q.mu.Unlock()
		return
	}
	q.unlink(w)
	q.expired++
	q.unhold(w)
	q.mu.Unlock()
	w.wake(WakeExpired)
}

// Leave takes out a connection whose client gave up while it waited; it
// reports whether w was still held (false: it was served or reset
// meanwhile).
func (q *ConnQueue) Leave(w *QueueWaiter) bool {
	q.mu.Lock()
	if !w.held {
		q.mu.Unlock()
		return false
	}
	woken := !w.listed
	if w.listed {
		q.unlink(w)
	} else {
		q.out--
	}
	q.abandoned++
	q.unhold(w)
	q.mu.Unlock()
	if woken {
		q.Kick() // the room it was woken for goes to the next
	}
	return true
}

// Kick wakes the connection at the head of the queue to choose again: a
// member's connection ended, or a commit or a monitor may have made room.
func (q *ConnQueue) Kick() {
	q.mu.Lock()
	w := q.head
	if w == nil {
		if q.out > 0 {
			q.missed++ // one out choosing tries again (Requeue)
		}
		q.mu.Unlock()
		return
	}
	q.unlink(w)
	q.out++
	q.mu.Unlock()
	w.wake(WakeRetry)
}

// Requeue is how a woken connection that found no room goes back to the
// head of the queue, keeping its place and its time limit. It returns
// WakeRetry when the connection should choose again at once (room was
// made while it was choosing), WakeExpired when its time limit passed
// meanwhile, WakeDropped when the pool is gone; for all three the
// connection is no longer listed (RetryNow's caller chooses, then calls
// Requeue, Served or Done again). ok is true when it waits again.
func (q *ConnQueue) Requeue(w *QueueWaiter) (again QueueWake, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case !w.held:
		return WakeDropped, false
	case w.expired:
		q.out--
		q.expired++
		q.unhold(w)
		return WakeExpired, false
	case q.closed:
		q.out--
		q.dropped++
		q.unhold(w)
		return WakeDropped, false
	case q.missed > 0:
		q.missed--
		return WakeRetry, false
	}
	q.out--
	q.pushFront(w)
	return 0, true
}

// Served counts a woken connection that found a member: its wait joins
// the age statistics, and the next connection is woken, since the room
// that served this one may not be the only room there is.
func (q *ConnQueue) Served(w *QueueWaiter) {
	q.mu.Lock()
	if !w.held {
		q.mu.Unlock()
		return
	}
	q.out--
	q.serviced++
	q.noteAge(q.now() - w.since)
	q.unhold(w)
	next := q.head != nil
	q.mu.Unlock()
	if next {
		q.Kick()
	}
}

// Took counts a woken request that found a member, as Served does, but
// wakes no one after it: on a message-balanced virtual the member's
// count moves only once the request's connection is open (or an idle
// one taken), so the next request is woken then (Member.SlotFreed), not
// before, when it would see the same room.
func (q *ConnQueue) Took(w *QueueWaiter) {
	q.mu.Lock()
	if w.held {
		q.out--
		q.serviced++
		q.noteAge(q.now() - w.since)
		q.unhold(w)
	}
	q.mu.Unlock()
}

// Done lets go of a woken connection that will not wait again (queueing
// was turned off, or no member is usable any more): it is reset, counted
// as dropped.
func (q *ConnQueue) Done(w *QueueWaiter) {
	q.mu.Lock()
	if !w.held {
		q.mu.Unlock()
		return
	}
	woken := !w.listed
	if w.listed {
		q.unlink(w)
	} else {
		q.out--
	}
	q.dropped++
	q.unhold(w)
	q.mu.Unlock()
	if woken {
		q.Kick()
	}
}

// noteAge folds one serviced wait into the age statistics (q.mu held):
// the maximum, an exponential moving average (weight 1/8), and an
// exponentially decaying maximum (a peak that fades by 1/8 per service).
func (q *ConnQueue) noteAge(age int64) {
	age = max(age, 0)
	q.ageMax = max(q.ageMax, age)
	q.ageEMA += (age - q.ageEMA) / 8
	q.ageEDM = max(age, q.ageEDM-q.ageEDM/8)
}

// Trim resets the connections beyond a lowered depth limit, from the end
// of the queue, and wakes the head in case room was made meanwhile
// (after a commit).
func (q *ConnQueue) Trim(depthLimit int) {
	var drop []*QueueWaiter
	q.mu.Lock()
	for depthLimit > 0 && q.depth > depthLimit {
		w := q.tail
		q.unlink(w)
		q.dropped++
		q.unhold(w)
		drop = append(drop, w)
	}
	q.mu.Unlock()
	for _, w := range drop {
		w.wake(WakeDropped)
	}
	q.Kick()
}

// Flush wakes every listed connection to choose once more: queueing was
// turned off, so each is served if a member has room now and reset
// otherwise (its Requeue is refused by the caller, who calls Done).
func (q *ConnQueue) Flush() {
	var all []*QueueWaiter
	q.mu.Lock()
	for w := q.head; w != nil; w = q.head {
		q.unlink(w)
		q.out++
		all = append(all, w)
	}
	q.mu.Unlock()
	for _, w := range all {
		w.wake(WakeRetry)
	}
}

// Close resets every connection of a deleted pool's queue, now and
// later: the queue takes no more.
func (q *ConnQueue) Close() {
	var all []*QueueWaiter
	q.mu.Lock()
	q.closed = true
	for w := q.head; w != nil; w = q.head {
		q.unlink(w)
		q.dropped++
		q.unhold(w)
		all = append(all, w)
	}
	q.mu.Unlock()
	for _, w := range all {
		w.wake(WakeDropped)
	}
}

// Waiting reports whether connections wait in the queue (listed): a new
// connection then joins behind them instead of overtaking them.
func (q *ConnQueue) Waiting() bool {
	q.mu.Lock()
	n := q.depth
	q.mu.Unlock()
	return n > 0
}

// ConnQueueStats is a queue's statistics as `show ltm pool` prints them
// (connq.*): ages in milliseconds.
type ConnQueueStats struct {
	// Depth is the connections waiting now; AgeHead how long the first
	// has waited.
	Depth   uint64
	AgeHead uint64
	// AgeMax is the longest wait of a serviced connection (or of the
	// head, when longer); AgeEMA their moving average and AgeEDM their
	// decaying maximum.
	AgeMax, AgeEMA, AgeEDM uint64
	// Serviced counts the connections the queue handed to a member.
	Serviced uint64
	// Abandoned counts clients that gave up waiting, Expired those reset
	// at queue-time-limit, Dropped those refused at queue-depth-limit or
	// reset because the queue was turned off, shrank or went away.
	Abandoned, Expired, Dropped uint64
}

// Stats reads the queue's statistics.
func (q *ConnQueue) Stats() ConnQueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	ms := func(ns int64) uint64 { return uint64(max(ns, 0) / int64(time.Millisecond)) }
	s := ConnQueueStats{Depth: uint64(q.depth), AgeMax: ms(q.ageMax), AgeEMA: ms(q.ageEMA), AgeEDM: ms(q.ageEDM),
		Serviced: q.serviced, Abandoned: q.abandoned, Expired: q.expired, Dropped: q.dropped}
	if q.head != nil {
		s.AgeHead = ms(q.now() - q.head.since)
		s.AgeMax = max(s.AgeMax, s.AgeHead)
	}
	return s
}

// ResetStats forgets the queue's history (reset-stats); the connections
// waiting stay.
func (q *ConnQueue) ResetStats() {
	q.mu.Lock()
	q.serviced, q.abandoned, q.expired, q.dropped = 0, 0, 0, 0
	q.ageMax, q.ageEMA, q.ageEDM = 0, 0, 0
	q.mu.Unlock()
}

// slotFreed wakes the queues a connection ended on m may make room for:
// its pool's and, when its node has a connection limit (shared by the
// members of every pool on the node), every queue that holds connections.
func (m *Member) slotFreed() {
	m.Pool.Queue.Kick()
	if m.Node.Cfg.Load().ConnectionLimit <= 0 {
		return
	}
	for _, q := range heldQueues() {
		if q != &m.Pool.Queue {
			q.Kick()
		}
	}
}

// heldQueues lists the queues holding connections.
func heldQueues() []*ConnQueue {
	activeQueues.Lock()
	defer activeQueues.Unlock()
	out := make([]*ConnQueue, 0, len(activeQueues.set))
	for q := range activeQueues.set {
		out = append(out, q)
	}
	return out
}

// AnyQueued reports whether some queue holds connections or requests:
// until one does, a new request has nobody to queue behind, and its
// path reads this one counter.
func AnyQueued() bool { return queuedTotal.Load() != 0 }

// KickAll wakes the head of every queue holding connections (a member or
// node came up: it has room for them).
func KickAll() {
	if queuedTotal.Load() == 0 {
		return
	}
	for _, q := range heldQueues() {
		q.Kick()
	}
}

// QueueAt decides, for a connection no member could take, whether it
// queues: the pool queues on connection limit and some member not in
// exclude is usable, and every such member is at its (or its node's)
// connection limit. A pool whose members are all down, or only rate
// limited, resets as before.
func (p *Pool) QueueAt(exclude []*Member) bool {
	return p.QueueAtWith(exclude, nil)
}

// QueueAtWith is QueueAt with full deciding whether a member is at its
// connection limit (message-balanced virtuals, as PickWith's room); nil:
// AtConnectionLimit.
func (p *Pool) QueueAtWith(exclude []*Member, full func(*Member) bool) bool {
	s := p.Snap.Load()
	if s == nil || !s.Cfg.QueueOnConnLimit {
		return false
	}
	usable := false
	for _, m := range s.Members {
		if containsMember(exclude, m) || !m.Usable() {
			continue
		}
		if full == nil && !m.AtConnectionLimit() || full != nil && !full(m) {
			return false
		}
		usable = true
	}
	return usable
}

// HasRoom reports whether some usable member of the pool could take a
// connection now (a newcomer behind waiting connections wakes the head
// when there is).
func (p *Pool) HasRoom() bool {
	return p.HasRoomWith(nil)
}

// HasRoomWith is HasRoom with room deciding a member's connection limit
// (as PickWith's); nil: AtLimit.
func (p *Pool) HasRoomWith(room func(*Member) bool) bool {
	s := p.Snap.Load()
	if s == nil {
		return false
	}
	for _, m := range s.Members {
		if !m.Usable() {
			continue
		}
		if room == nil && !m.AtLimit() || room != nil && room(m) && !m.AtRateLimit() {
			return true
		}
	}
	return false
}

// SlotFreed tells the connection queues that m may take another
// message: a OneConnect connection to it went back idle. With no
// connection queued anywhere it costs one atomic load.
func (m *Member) SlotFreed() {
	if queuedTotal.Load() != 0 && m.Pool != nil {
		m.slotFreed()
	}
}
