package gslb

import "sync/atomic"

// counter is a statistic the answer path adds to: one atomic per shard,
// each on a cache line of its own, summed when read. Why: the UDP readers
// of two CPUs answering at full speed wrote the same counters (a dozen
// per query: the server's, the wide IP's, the pool's, the member's and
// its virtual server's, host's and link's) and the same lines as the
// availability states read beside them; each write then had to take the
// line from the other CPU. BenchmarkAnswerWireParallel: two CPUs answered
// 2.6 M queries/s together against 5.9 M for one alone. A reader writes
// only its shard (request.shard); paths that are not a UDP reader's
// (TCP, rules, name pools) use shard 0. The round-robin positions stay
// single atomics: one rotation across the readers is what a user counting
// answers expects (two rotations interleaved look like a broken one).
type counter struct {
	_  [64]byte // off the line of the field before
	sh [counterShards]shardCount
}

// counterShards is how many copies a counter keeps, a power of two; more
// readers than that share copies (reader index modulo counterShards).
const counterShards = 4

// shardCount is one copy of a counter. 64 bytes of padding on each side
// of each copy keep it off any other's cache line, whatever the
// allocation's alignment.
type shardCount struct {
	atomic.Uint64
	_ [64]byte
}

// Inc adds one in shard sh.
func (c *counter) Inc(sh int) { c.sh[sh&(counterShards-1)].Add(1) }

// Add adds n in shard sh.
func (c *counter) Add(sh, n int) { c.sh[sh&(counterShards-1)].Add(uint64(n)) }

// Load is the sum over the shards.
func (c *counter) Load() uint64 {
	var n uint64
	for i := range c.sh {
		n += c.sh[i].Load()
	}
	return n
}

// Reset zeroes the counter (reset-stats).
func (c *counter) Reset() {
	for i := range c.sh {
		c.sh[i].Store(0)
	}
}
