package rules

import (
	"math"
	"sync/atomic"
	"time"
)

// statShards is how many copies of an event's counters a rule keeps.
// Every connection counts into one copy, chosen when its state is made,
// so that event loops on different CPUs rarely write the same cache line;
// a show adds the copies up.
const statShards = 4

// eventShard is one copy of an event's counters, alone on its cache line.
type eventShard struct {
	execs, failures, aborts atomic.Uint64
	// totalNs, minNs and maxNs are the time the executions took; minNs
	// 0 means no execution was timed yet (a run is counted as at least
	// 1 ns).
	totalNs, minNs, maxNs atomic.Uint64
	_                     [16]byte
}

// eventCounters are a rule's counters for one event, shared by every
// virtual server and connection running the rule: they live with the
// compiled rule, so a commit that keeps the rule's text keeps them.
type eventCounters struct {
	shards [statShards]eventShard
}

// outcome is how one execution of an event's handler ended.
type outcome uint8

const (
	ranOK      outcome = iota
	ranFailed          // an uncaught Tcl error
	ranAborted         // the rule ended the flow (reject, drop, discard) or overran its budget
)

// record counts one execution that took d. It allocates nothing; the
// minimum and maximum are written only when they change.
func (c *eventCounters) record(shard uint32, d time.Duration, o outcome) {
	sh := &c.shards[shard%statShards]
	ns := uint64(max(d, 1))
	sh.execs.Add(1)
	sh.totalNs.Add(ns)
	switch o {
	case ranFailed:
		sh.failures.Add(1)
	case ranAborted:
		sh.aborts.Add(1)
	}
	for {
		m := sh.maxNs.Load()
		if ns <= m || sh.maxNs.CompareAndSwap(m, ns) {
			break
		}
	}
	for {
		m := sh.minNs.Load()
		if (m != 0 && ns >= m) || sh.minNs.CompareAndSwap(m, ns) {
			break
		}
	}
}

func (c *eventCounters) reset() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.execs.Store(0)
		sh.failures.Store(0)
		sh.aborts.Store(0)
		sh.totalNs.Store(0)
		sh.minNs.Store(0)
		sh.maxNs.Store(0)
	}
}

// EventStats is a snapshot of one rule's statistics for one event, what
// `show ltm rule` prints as one `Ltm::Rule Event` block.
type EventStats struct {
	Event Event
	// Priority is that of the rule's first when block for the event.
	Priority int
	// Executions counts every run of the event's handlers; Failures those
	// that ended in an uncaught Tcl error, Aborts those that ended the
	// flow (reject, drop, discard) or overran the event's budget.
	Executions, Failures, Aborts uint64
	// Total, Min and Max are the wall time the executions took, from
	// entering the handler to its return.
	Total, Min, Max time.Duration
}

// Average is the mean time of one execution, 0 before the first.
func (s EventStats) Average() time.Duration {
	if s.Executions == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Executions)
}

func (c *eventCounters) snapshot(ev Event, prio int) EventStats {
	st := EventStats{Event: ev, Priority: prio}
	var total, mn, mx uint64
	for i := range c.shards {
		sh := &c.shards[i]
		st.Executions += sh.execs.Load()
		st.Failures += sh.failures.Load()
		st.Aborts += sh.aborts.Load()
		total += sh.totalNs.Load()
		if m := sh.minNs.Load(); m != 0 && (mn == 0 || m < mn) {
			mn = m
		}
		mx = max(mx, sh.maxNs.Load())
	}
	clamp := func(v uint64) time.Duration { return time.Duration(min(v, math.MaxInt64)) }
	st.Total, st.Min, st.Max = clamp(total), clamp(mn), clamp(mx)
	return st
}

// Stats returns the rule's statistics, one entry per event it handles,
// in the order the events first appear in the rule. They count every
// execution on every virtual server the rule is attached to since the
// rule was compiled or ResetStats was called.
func (r *Rule) Stats() []EventStats {
	var out []EventStats
	for _, h := range r.handlers {
		if h.first {
			out = append(out, h.stats.snapshot(h.Event, h.Priority))
		}
	}
	return out
}

// ResetStats zeroes the rule's statistics (reset-stats ltm rule).
func (r *Rule) ResetStats() {
	for _, h := range r.handlers {
		if h.first {
			h.stats.reset()
		}
	}
}

// shardSeq hands out the counter copy of each new connection state.
var shardSeq atomic.Uint32

// ipfixCounters are what a rule's IPFIX:: commands did, for show sys
// ipfix irules; a rule that names no IPFIX:: command has none.
type ipfixCounters struct {
	templates, created, sent, dropped atomic.Uint64
}

// IPFIXStats are a rule's IPFIX:: counters: the templates IPFIX::template
// create made, the messages IPFIX::msg create made, and the messages
// IPFIX::destination send gave to a destination that queued them (Sent)
// or that none queued (Dropped: a full queue, no collector).
type IPFIXStats struct {
	Templates, Created, Sent, Dropped uint64
}

// IPFIX reports the rule's IPFIX:: counters; false for a rule that names
// no IPFIX:: command.
func (r *Rule) IPFIX() (IPFIXStats, bool) {
	c := r.ipfix
	if c == nil {
		return IPFIXStats{}, false
	}
	return IPFIXStats{Templates: c.templates.Load(), Created: c.created.Load(), Sent: c.sent.Load(), Dropped: c.dropped.Load()}, true
}

// ResetIPFIXStats zeroes the rule's IPFIX:: counters (reset-stats sys
// ipfix irules).
func (r *Rule) ResetIPFIXStats() {
	if c := r.ipfix; c != nil {
		for _, x := range []*atomic.Uint64{&c.templates, &c.created, &c.sent, &c.dropped} {
			x.Store(0)
		}
	}
}

// ipfixCount is the counters of the rule running now on s; nil outside a
// rule's event or for a rule without them.
func (s *ConnState) ipfixCount() *ipfixCounters {
	if s == nil || s.cur == nil {
		return nil
	}
	return s.cur.rule.ipfix
}
