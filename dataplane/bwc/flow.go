package bwc

import (
	"github.com/openltm/openltm/dataplane/internal/config"
)

// FlowBucket is a bucket of one flow's own, outside every policy, of
// bytesPerSec bytes per second (0: no limit until SetRate gives one): a
// rule's per-flow rate (UDP::max_rate) paces the flow's datagrams on it
// through a Queue as a policy's do, and its counters (Passed, Dropped)
// are those of a private policy no show lists.
func FlowBucket(bytesPerSec uint64) *Bucket {
	p := newPolicy(config.BWCPolicy{Dynamic: true, MaxUserRate: bytesPerSec * 8})
	return p.Attach("")
}

// SetRate gives a FlowBucket's queue the byte bound of bytesPerSec, as
// NewQueue does a policy's: half a second of it, at least 64 KB.
func (q *Queue[T]) SetRate(bytesPerSec uint64) {
	q.mu.Lock()
	q.limit = max(minQueue, int(min(float64(bytesPerSec)*queueSeconds, float64(1<<30))))
	q.mu.Unlock()
}

// QueueStats is what a Queue holds now and has dropped, for a rule that
// asks (UDP::debug_queue).
type QueueStats struct {
	// Pkts and Bytes are the datagrams waiting now; MaxPkts their bound
	// (0: only the byte bound).
	Pkts, Bytes, MaxPkts int
	// Passed and Dropped count the datagrams the queue's bucket let pass
	// and those the queue had no room for, over the bucket's life.
	Passed, Dropped uint64
}

// SetMaxPackets bounds the datagrams q holds at n besides its byte bound
// (0: the byte bound alone); those past it are dropped and counted.
func (q *Queue[T]) SetMaxPackets(n int) {
	q.mu.Lock()
	q.maxPkts = n
	q.mu.Unlock()
}

// Stats reads q's occupancy and its bucket's counters. Passed and
// Dropped are the whole policy's, which for a FlowBucket is the flow's
// direction alone.
func (q *Queue[T]) Stats() QueueStats {
	q.mu.Lock()
	s := QueueStats{Pkts: len(q.items), Bytes: q.bytes, MaxPkts: q.maxPkts}
	q.mu.Unlock()
	s.Passed, s.Dropped = q.b.p.PassedPkts.Load(), q.b.p.DroppedPkts.Load()
	return s
}
