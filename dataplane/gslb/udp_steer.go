package gslb

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// udpSteer decides how many of a UDP listener's sockets the kernel gives
// queries to: the first only while its reader keeps up, every socket
// (steered by the receiving CPU, rawsock.SteerByCPU) once it does not.
// Why: a reader per CPU is what full speed needs (one reader capped the
// rate at about 0.75× on two CPUs), but below that two readers woken
// apart cost the runtime a thread hand-off for most queries (one thread
// polls, finds both ready, wakes another for the second, which sleeps
// again right after): at steady rates from 10 000 to 150 000 queries/s
// the listener spent 16-51 % less CPU per query on one reader than on
// two, at about the same latency (README, "One socket until the load
// needs more"). A reader
// idle on its socket costs nothing; datagrams already queued on a socket
// still wake its reader after a switch, so none is left unread.
//
// A reader that keeps up reads what arrived since it last looked, a
// few queries; one that does not finds a full batch (udpBatch) waiting.
// So the queries spread when at least half the batches of a window were
// full, and go back to the first socket when a window's rate falls
// under half the rate of the window that spread them: the first reader
// then has about twice the room it ran out of.
type udpSteer struct {
	set      func(n int) error // steers to the first n sockets
	n        int               // the listener's sockets
	log      *slog.Logger
	base     time.Time     // the listener's start; windows are read from it
	mu       sync.Mutex    // one switch at a time, in order
	spread   atomic.Bool   // every socket takes queries; else the first
	start    atomic.Int64  // the window's start, ns since base
	read     windowCount   // queries read
	batches  windowCount   // batches read
	full     windowCount   // full batches
	spreadAt atomic.Uint64 // queries/s of the window that spread them
	failed   atomic.Bool   // a switch failed: logged once
}

// steerWindow is how often the load is judged: short enough that a
// reader falling behind gets help within a few socket buffers' worth of
// queries, long enough that a switch (one setsockopt) stays rare.
const steerWindow = 50 * time.Millisecond

// steerIdle is the longest window judged; a longer one had gaps.
const steerIdle = 4 * steerWindow

// steerMinBatches is the fewest batches in a window that judge it full:
// a lone burst is not a load.
const steerMinBatches = 16

// newUDPSteer steers the group of conns to its first socket and returns
// what switches it; nil (the kernel's hash over every socket stays) for
// one socket or where the kernel takes no steering program.
func newUDPSteer(conns []*net.UDPConn, now time.Time, log *slog.Logger) (*udpSteer, error) {
	if len(conns) < 2 {
		return nil, nil
	}
	if err := rawsock.SteerByCPU(conns, 1); err != nil {
		return nil, err
	}
	st := &udpSteer{set: func(n int) error { return rawsock.SteerByCPU(conns, n) }, n: len(conns), log: log, base: now}
	return st, nil
}

// note records a batch of n queries that reader shard read at now (full:
// as many as one read takes, so more were likely waiting) and switches
// when a window ends. Per batch it adds to the reader's own counters and
// reads a shared word that changes once per window.
func (st *udpSteer) note(shard, n int, full bool, now time.Time) {
	st.read.Add(shard, n)
	st.batches.Inc(shard)
	if full {
		st.full.Inc(shard)
	}
	// The monotonic clock's reading: a wall clock set back would
	// otherwise hold a window open.
	t, w := int64(now.Sub(st.base)), st.start.Load()
	if t-w < int64(steerWindow) || !st.start.CompareAndSwap(w, t) {
		return
	}
	// This reader closes the window; the others go on adding.
	q, b, f := st.read.since(), st.batches.since(), st.full.since()
	if t-w > int64(steerIdle) {
		// The listener was idle for most of it: no judge of the load
		// that starts now. Spread readers cost nothing while idle, and
		// a load that resumes at full speed keeps them.
		return
	}
	rate := q * uint64(time.Second) / uint64(t-w)
	switch {
	case !st.spread.Load() && b >= steerMinBatches && 2*f >= b:
		st.spreadAt.Store(rate)
		st.to(true)
	case st.spread.Load() && 2*rate < st.spreadAt.Load():
		st.to(false)
	}
}

// windowCount is a count the readers add to on their own shards, read
// once per window as how much it grew since the window before.
type windowCount struct {
	counter
	seen atomic.Uint64 // the total when the window started
}

// since is how much the count grew since the last call.
func (c *windowCount) since() uint64 {
	total := c.Load()
	return total - c.seen.Swap(total)
}

// to steers to every socket (spread) or to the first.
func (st *udpSteer) to(spread bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.spread.CompareAndSwap(!spread, spread) {
		return
	}
	n := 1
	if spread {
		n = st.n
	}
	if err := st.set(n); err != nil && !st.failed.Swap(true) {
		// The listener closing under the switch, or a kernel that
		// refused the program it took before: the last program stands.
		st.log.Warn("gtm listener: steering of queries not switched", "sockets", n, "err", err)
	}
}
