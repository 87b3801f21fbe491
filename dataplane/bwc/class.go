package bwc

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Rate classes (`net rate-shaping class`) are policies of this package
// with a class: the flows a virtual's rate-class or a rule's rateclass
// puts in one wait on its buckets, as a bwc policy's flows wait on
// theirs, so that every path that paces a flow for a bwc policy (the L4
// proxy's copy loops, an http virtual's client connection) paces it for
// a rate class alike, and a flow that has neither pays the one nil check
// it paid before.
//
// A class is a hierarchical token bucket, as BIG-IP describes its rate
// classes (https://techdocs.f5.com/kb/en-us/products/big-ip-aam/manuals/product/bigip-acceleration-concepts-13-0-0/4.html,
// https://clouddocs.f5.com/api/icontrol-rest/APIRef_tm_net_rate-shaping_class.html):
// its rate is what its flows always get; up to its ceiling they borrow
// what its parent (and the parent's parent, within each one's ceiling)
// has spare; no byte passes beyond the ceiling. Every byte a class sends
// counts against its ancestors' rates too, so that siblings busy at
// their own rates leave the parent nothing to lend.

// classChunk is the most a flow takes of a class's buckets at once: the
// depth of the smallest bucket, so that a write larger than it waits in
// parts [M: BIG-IP's max-burst 0 is "no burst"; openltm's buckets hold
// at least one proxy copy buffer, 16 KB, which on a transfer of a
// megabyte is under 2% of it].
const classChunk = minBurst

// classNode is one class's buckets and its parent's.
type classNode struct {
	name string
	// rateL is the class's rate, with max-burst (at least classChunk)
	// as its depth; ceilL its ceiling, nil when the ceiling is the rate
	// (the class cannot borrow).
	rateL, ceilL *rate.Limiter
	parent       *classNode
	dir          int
	cfg          config.RateClass

	// waiting and flows are the bytes and the flows waiting on the
	// class now (its queue depth, for show); borrowed counts the bytes
	// sent above the class's rate with its parent's spare.
	waiting  atomic.Int64
	flows    atomic.Int32
	borrowed atomic.Uint64

	// fifoQ is a pfifo class's queue (qdisc.go), made on first use;
	// drops counts the datagrams its queues dropped, by reason.
	fifoQ atomic.Pointer[classFIFO]
	drops queueDrops
}

func newClassNode(c config.RateClass, parent *classNode) *classNode {
	burst := max(int(min(c.MaxBurst, 1<<30)), classChunk)
	n := &classNode{name: c.Name, cfg: c, parent: parent, dir: c.Direction,
		rateL: rate.NewLimiter(rate.Limit(float64(c.Rate)/8), burst)}
	if c.Ceiling > c.Rate && parent != nil {
		n.ceilL = rate.NewLimiter(rate.Limit(float64(c.Ceiling)/8), burst)
	}
	return n
}

// applies reports whether the class shapes the bytes going that way.
func (c *classNode) applies(toServer bool) bool {
	switch c.dir {
	case config.RateToClient:
		return !toServer
	case config.RateToServer:
		return toServer
	}
	return true
}

// tokenDelay is how long from now until l holds n tokens.
func tokenDelay(l *rate.Limiter, now time.Time, n int) time.Duration {
	t := l.TokensAt(now)
	if t >= float64(n) {
		return 0
	}
	return time.Duration((float64(n) - t) / float64(l.Limit()) * float64(time.Second))
}

// delay is how long from now until the class can send n bytes: with its
// own rate, or (below its ceiling) with what its parent can lend then.
func (c *classNode) delay(now time.Time, n int) time.Duration {
	d := tokenDelay(c.rateL, now, n)
	if c.ceilL != nil {
		d = min(d, max(tokenDelay(c.ceilL, now, n), c.parent.delay(now, n)))
	}
	return d
}

// take takes n bytes (at most classChunk) of the class's buckets at now
// from whichever gives them first, its own rate or its parent's spare
// (within its ceiling), and says how long after now they may be sent
// and whether they were borrowed. Every byte counts against the
// ancestors' rates: what the class sends at its own rate leaves its
// parent that much less to lend.
func (c *classNode) take(now time.Time, n int) (time.Duration, bool) {
	own := tokenDelay(c.rateL, now, n)
	if c.ceilL != nil {
		if bd := max(tokenDelay(c.ceilL, now, n), c.parent.delay(now, n)); bd < own {
			c.ceilL.ReserveN(now, n)
			c.parent.take(now, n)
			return bd, true
		}
		c.ceilL.ReserveN(now, n)
	}
	c.rateL.ReserveN(now, n)
	c.parent.charge(now, n)
	return own, false
}

// charge counts n bytes a descendant sent against the class and its
// ancestors, without waiting: their buckets go into debt, which leaves
// less for them to lend.
func (c *classNode) charge(now time.Time, n int) {
	for ; c != nil; c = c.parent { // nil: a root class's parent
		c.rateL.ReserveN(now, n)
		if c.ceilL != nil {
			c.ceilL.ReserveN(now, n)
		}
	}
}

// wait blocks until n bytes may pass the class; it reports whether they
// had to wait.
func (c *classNode) wait(n int) bool {
	c.waiting.Add(int64(n))
	c.flows.Add(1)
	defer func() {
		c.waiting.Add(-int64(n))
		c.flows.Add(-1)
	}()
	now := time.Now()
	var d time.Duration
	for left := n; left > 0; {
		// Each part goes into the buckets' debt at now: the last one's
		// delay is the whole write's.
		k := min(left, classChunk)
		kd, borrowed := c.take(now, k)
		if borrowed {
			c.borrowed.Add(uint64(k))
		}
		d = max(d, kd)
		left -= k
	}
	if d <= 0 {
		return false
	}
	time.Sleep(d)
	return true
}

// newClassPolicy is the policy a class's flows attach to: no max-rate
// of its own (the class's buckets are its limit), no marking.
func newClassPolicy(c config.RateClass, parent *classNode) *Policy {
	p := newPolicy(config.BWCPolicy{Name: c.Name, Mark: config.BWCMark{TOS: -1, QoS: -1}})
	p.class = newClassNode(c, parent)
	return p
}

// ApplyClasses makes the set's rate classes cfg's. A class whose
// settings and ancestors did not change keeps its buckets and counters;
// a changed one (or one under a changed parent) starts afresh for the
// flows put in it from now on, while the flows already in the old one
// go on at its rates.
func (s *Set) ApplyClasses(cfg map[string]*config.RateClass) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(cfg))
	for n := range cfg {
		names = append(names, n)
	}
	depth := func(n string) int {
		d := 0
		for c := cfg[n]; c != nil && c.Parent != "" && d <= len(cfg); c = cfg[c.Parent] {
			d++
		}
		return d
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := depth(names[i]), depth(names[j])
		return di < dj || di == dj && names[i] < names[j]
	})
	next := make(map[string]*Policy, len(cfg))
	for _, n := range names {
		c := cfg[n]
		var parent *classNode
		if pp := next[c.Parent]; pp != nil {
			parent = pp.class
		}
		if old := s.classes[n]; old != nil && old.class.cfg == *c && old.class.parent == parent {
			next[n] = old
			continue
		}
		next[n] = newClassPolicy(*c, parent)
	}
	s.classes = next
}

// Class is the running rate class of that full path; nil when there is
// none (or s is nil).
func (s *Set) Class(name string) *Policy {
	if s == nil || name == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.classes[name]
}

// RuleClass finds a running rate class by the name a rule gives: a bare
// name is in /Common, as for BWC::policy.
func (s *Set) RuleClass(name string) (*Policy, error) {
	full := name
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + name
	}
	p := s.Class(full)
	if p == nil {
		return nil, fmt.Errorf("rate class %s not found", full)
	}
	return p, nil
}

// IsClass reports whether p is a rate class's.
func (p *Policy) IsClass() bool { return p != nil && p.class != nil }

// ClassStats are a rate class's counters, for show net rate-shaping
// class.
type ClassStats struct {
	// Bytes and Pkts are what passed (a stream's write counts as the
	// full segments it fills); Delayed the bytes that waited first;
	// Borrowed the bytes sent above the rate with the parent's spare;
	// Dropped what a class drops (streams wait and never drop).
	Bytes, Pkts, Delayed, Borrowed, Dropped uint64
	// DroppedFull and DroppedEarly are the datagrams dropped by a full
	// queue and by the drop policy (red, fred) before it was full.
	DroppedFull, DroppedEarly uint64
	// Rate is the bits per second passed over the last whole second.
	Rate uint64
	// QueueBytes and QueueFlows are the bytes and flows waiting now;
	// QueuePkts the datagrams in a pfifo class's queue.
	QueueBytes int64
	QueueFlows int32
	QueuePkts  int
}

// ClassStats reads a class's counters.
func (p *Policy) ClassStats() ClassStats {
	c := p.class
	st := ClassStats{
		Bytes: p.Passed.Load(), Pkts: p.PassedPkts.Load(), Delayed: p.Delayed.Load(),
		Borrowed: c.borrowed.Load(), Dropped: p.Dropped.Load(), Rate: p.rate.bps(time.Now()),
		QueueBytes: c.waiting.Load(), QueueFlows: c.flows.Load(),
		DroppedFull: c.drops.full.Load(), DroppedEarly: c.drops.early.Load(),
	}
	if f := c.fifoQ.Load(); f != nil {
		f.mu.Lock()
		st.QueueBytes += int64(f.bytes)
		st.QueuePkts = len(f.items)
		f.mu.Unlock()
	}
	return st
}

// ResetClassStats zeroes a class's counters (reset-stats net
// rate-shaping class).
func (p *Policy) ResetClassStats() {
	p.ResetStats()
	p.class.borrowed.Store(0)
	p.class.drops.full.Store(0)
	p.class.drops.early.Store(0)
}

// WaitDir is Wait for n bytes of a stream going to the server (toServer)
// or to the client: a rate class shapes only its direction's; a class
// chained after the flow's policy (SetClass) waits after it.
func (b *Bucket) WaitDir(n int, toServer bool) {
	if n <= 0 {
		return
	}
	if c := b.p.class; c == nil || c.applies(toServer) {
		b.wait(n, (n+packetBytes-1)/packetBytes)
	}
	if t := b.then.Load(); t != nil {
		t.WaitDir(n, toServer)
	}
}

// WaitDatagramDir is WaitDir for one datagram of n bytes (one packet)
// going to the server (toServer) or to the client: a datagram flow's
// Queue of that direction waits on it.
func (b *Bucket) WaitDatagramDir(n int, toServer bool) {
	if c := b.p.class; c == nil || c.applies(toServer) {
		b.wait(n, 1)
	}
	if t := b.then.Load(); t != nil {
		t.WaitDatagramDir(n, toServer)
	}
}

// SetClass puts the flow on b in a rate class besides b's policy (cb, a
// class's bucket; nil: none): its bytes wait on the policy, then on the
// class.
func (b *Bucket) SetClass(cb *Bucket) { b.then.Store(cb) }

// Class is the rate class bucket chained after b's policy; nil for none.
func (b *Bucket) Class() *Bucket { return b.then.Load() }

// WithClass is the bucket a flow on b (nil: none) is on once a rule puts
// it in class p (rateclass): p's own bucket in place of b when b is none
// or another class's (swap is true: the caller puts the flow on it and
// releases b), else b with p's chained after its policy (swap false).
func WithClass(b *Bucket, p *Policy, key string) (nb *Bucket, swap bool) {
	cb := p.Attach(key)
	if b == nil || b.p.IsClass() {
		return cb, true
	}
	b.SetClass(cb)
	return b, false
}

// Inherit carries old's rate class (old itself when it is a class's
// bucket, else the class chained after it) over to b, which replaces it
// for a flow (BWC::policy attach on a flow in a rate class).
func (b *Bucket) Inherit(old *Bucket) {
	if b == nil || old == nil {
		return
	}
	if old.p.IsClass() {
		b.SetClass(old)
		return
	}
	if t := old.then.Load(); t != nil {
		b.SetClass(t)
	}
}

// AttachClass is Attach with class cls chained after the policy (a
// virtual with both a bwc-policy and a rate-class); cls alone when p is
// nil.
func (p *Policy) AttachClass(key string, cls *Policy) *Bucket {
	if p == nil {
		return cls.Attach(key)
	}
	b := p.Attach(key)
	if cls != nil {
		b.SetClass(cls.Attach(key))
	}
	return b
}

// ClassRates are a class's rate and ceiling, bits per second.
func (p *Policy) ClassRates() (rate, ceiling uint64) {
	return p.class.cfg.Rate, p.class.cfg.Ceiling
}
