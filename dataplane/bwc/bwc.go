// Package bwc is BIG-IP's bandwidth controllers (`net bwc policy`): token
// buckets that the bytes of the flows attached to a policy wait on before
// they are written. A static policy's flows share one bucket of max-rate;
// a dynamic policy gives each instance (a user) its own bucket of
// max-user-rate (and max-user-rate-pps), inside the policy's max-rate.
//
// A dynamic policy's categories (BWC::color set) each have a bucket of
// their own, shared by the flows put in them, inside the policy's;
// a flow's priority level (BWC::priority, or its category's) lets the
// flows of higher levels take the policy's bucket first, or, under a
// priority group, gives each busy level its weight's share (priority.go);
// the policy's and category's ip-tos and link-qos (or BWC::mark's) are
// set on the flow's sockets (IP_TOS, SO_PRIORITY: MarkConn, MarkSide).
// A measured policy, category, instance or flow counts its bytes, and a
// policy with a log-publisher logs them each log-period (measure.go).
// Ingress is a rule's limit on a stream client's packets
// (IP::ingress_rate_limit), read through Conn on an http virtual.
//
// The buckets are golang.org/x/time/rate limiters counting bytes. A flow
// that no policy applies to holds a nil *Bucket and pays one nil check;
// each attached flow has a Bucket of its own (one allocation), over its
// policy's and instance's limiters.
// Streams wait on a bucket before each write (the L4 proxy's copy loops;
// Conn for a message-based virtual's clients); datagrams wait in a
// bounded Queue per flow and direction, dropped past it. Each policy
// counts what passed, waited and was dropped, and its current rate, for
// show net bwc policy.
package bwc

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// minBurst is the least a bucket holds: one copy buffer of the proxy, so
// that a read of a full buffer is written in one wait.
const minBurst = 16 << 10

// burstTime is how much of its rate a bucket lets pass at once after a
// pause: a fifth of a second's worth, so that a flow starts without
// waiting while a long transfer still sees the rate.
const burstTime = 200 * time.Millisecond

// packetBytes is the payload counted as one packet for max-user-rate-pps: a
// full segment of a 1500-byte Ethernet link [M: openltm shapes the bytes
// it writes to sockets, not packets on a wire].
const packetBytes = 1448

// Set is the policies of the running configuration, by full path.
type Set struct {
	mu   sync.Mutex
	pols map[string]*Policy
	// classes are the rate classes, by full path (class.go).
	classes map[string]*Policy
	// send is where measurement lines go (SetLogSender); nil: nowhere
	// yet.
	send atomic.Pointer[LogSender]
}

// Apply makes the set cfg's policies. A policy whose settings did not
// change keeps its buckets and counters (its flows go on at its rate);
// a changed one starts afresh for the flows attached from now on. A
// policy with a log-publisher logs its measurements from here on; one
// dropped or changed stops.
func (s *Set) Apply(cfg map[string]*config.BWCPolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*Policy, len(cfg))
	for name, pc := range cfg {
		if p := s.pols[name]; p != nil && reflect.DeepEqual(p.Cfg, *pc) {
			next[name] = p
			continue
		}
		p := newPolicy(*pc)
		if pc.LogPublisher != "" {
			p.stop = make(chan struct{})
			go p.runLog(&s.send, p.stop)
		}
		next[name] = p
	}
	for name, p := range s.pols {
		if next[name] != p && p.stop != nil {
			close(p.stop)
		}
	}
	s.pols = next
}

// SetLogSender gives the policies' measurement logs their way to the
// log publishers.
func (s *Set) SetLogSender(send LogSender) { s.send.Store(&send) }

// Close stops every policy's measurement log.
func (s *Set) Close() { s.Apply(nil) }

// Policy is the running policy of that name; nil when there is none (or
// s is nil).
func (s *Set) Policy(name string) *Policy {
	if s == nil || name == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pols[name]
}

// Policies lists the running policies, for show.
func (s *Set) Policies() []*Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Policy, 0, len(s.pols))
	for _, p := range s.pols {
		out = append(out, p)
	}
	return out
}

// Policy is one bandwidth controller and its buckets.
type Policy struct {
	Cfg config.BWCPolicy
	// all is the policy's max-rate, shared by every flow; nil: none.
	all *rate.Limiter
	// cats are a dynamic policy's categories, by name: each one's
	// bucket is shared by the flows BWC::color puts in it.
	cats map[string]*category
	// active counts, per priority level, the flows waiting for the
	// policy's bucket now: a flow of a lower level lets them pass first
	// (BWC::priority), unless the policy has a priority group.
	active [Levels]atomic.Int32
	// shares are the priority group's (priority.go); nil: none.
	shares *shares
	// catList are cats in the configuration's order, for the log.
	catList []*category
	// m is the policy's measurement (measure enabled), stop ends its
	// log (nil: none).
	m    Measure
	stop chan struct{}

	mu    sync.Mutex
	users map[string]*instance // a dynamic policy's instances
	// flows are the measurements BWC::measure made on flows, logged
	// while their flows live.
	flows map[*Measure]struct{}

	// Passed counts the bytes the policy's flows wrote, PassedPkts the
	// writes and datagrams (a stream's write counts as the full segments
	// it fills); Delayed the bytes that waited for the bucket first.
	// Dropped and DroppedPkts count the datagrams a flow's queue had no
	// room for (Queue).
	Passed, PassedPkts, Delayed, Dropped, DroppedPkts atomic.Uint64
	// rate is the bytes passed this second and the last, for the current
	// rate show reports.
	rate meter
	// class is a rate class's buckets (class.go); nil for a bwc policy.
	class *classNode
}

// Stats are a policy's counters, for show net bwc policy.
type Stats struct {
	Passed, PassedPkts, Delayed, Dropped, DroppedPkts uint64
	// Rate is the bits per second passed over the last whole second.
	Rate uint64
	// Instances is a dynamic policy's users now.
	Instances int
	// MaxRate is the policy's max-rate, bits per second.
	MaxRate uint64
	// Measured are the policy's measurements now on (Policy.Measured).
	Measured []Measured
}

// Stats reads p's counters.
func (p *Policy) Stats() Stats {
	return Stats{
		Passed: p.Passed.Load(), PassedPkts: p.PassedPkts.Load(), Delayed: p.Delayed.Load(),
		Dropped: p.Dropped.Load(), DroppedPkts: p.DroppedPkts.Load(),
		Rate: p.rate.bps(time.Now()), Instances: p.Instances(), MaxRate: p.Cfg.MaxRate,
		Measured: p.Measured(),
	}
}

// ResetStats zeroes p's counters (reset-stats net bwc policy).
func (p *Policy) ResetStats() {
	for _, c := range []*atomic.Uint64{&p.Passed, &p.PassedPkts, &p.Delayed, &p.Dropped, &p.DroppedPkts} {
		c.Store(0)
	}
}

// meter counts bytes per wall-clock second: two atomics and a compare
// once a second, cheap enough for every write.
type meter struct {
	sec       atomic.Int64
	cur, last atomic.Uint64
}

func (m *meter) add(now time.Time, n uint64) {
	s := now.Unix()
	if old := m.sec.Load(); old != s && m.sec.CompareAndSwap(old, s) {
		if s == old+1 {
			m.last.Store(m.cur.Swap(0))
		} else {
			m.cur.Store(0)
			m.last.Store(0)
		}
	}
	m.cur.Add(n)
}

// bps is the bits of the last whole second.
func (m *meter) bps(now time.Time) uint64 {
	switch m.sec.Load() {
	case now.Unix():
		return m.last.Load() * 8
	case now.Unix() - 1:
		return m.cur.Load() * 8
	}
	return 0
}

func newPolicy(c config.BWCPolicy) *Policy {
	p := &Policy{Cfg: c, all: limiter(c.MaxRate), shares: newShares(c.Priority, c.MaxRate)}
	p.m.on.Store(c.Measure)
	if c.Dynamic {
		p.users = map[string]*instance{}
	}
	for _, cc := range c.Categories {
		if p.cats == nil {
			p.cats = map[string]*category{}
		}
		cat := &category{name: cc.Name, l: limiter(cc.MaxRate), mark: cc.Mark, level: -1}
		if cc.Leveled {
			cat.level = cc.Level
		}
		cat.m.on.Store(c.Measure)
		p.cats[cc.Name] = cat
		p.catList = append(p.catList, cat)
	}
	return p
}

// category is one of a dynamic policy's categories.
type category struct {
	name string
	l    *rate.Limiter
	mark config.BWCMark
	// level is the priority level its flows take; -1: their own.
	level int
	m     Measure
}

// Levels is how many priority levels a policy's flows have: 0 (the
// default, served last) to 7 (served first) [M: BIG-IP's priority groups
// order a policy's traffic; openltm gives each flow a level, as
// FLOW::priority and 802.1p number them, and a flow waits for the
// policy's bucket only while no flow of a higher level does].
const Levels = 8

// limiter is a byte bucket for bits per second; nil for 0 (no limit).
func limiter(bps uint64) *rate.Limiter {
	if bps == 0 {
		return nil
	}
	perSec := float64(bps) / 8
	burst := int(perSec * burstTime.Seconds())
	burst = max(burst, minBurst)
	return rate.NewLimiter(rate.Limit(perSec), burst)
}

// Attach is the bucket one flow attached to p waits on: its own, over
// the policy's (a static policy) or instance's (a dynamic one: the
// instance is made on first use, dropped when its last flow releases
// it). Nil for a nil policy.
func (p *Policy) Attach(key string) *Bucket {
	if p == nil {
		return nil
	}
	b := &Bucket{p: p}
	b.mark.Store(noMark)
	if !p.Cfg.Dynamic {
		return b
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.users[key]
	if in == nil {
		in = &instance{key: key}
		in.m.label = key
		in.m.on.Store(p.Cfg.Measure)
		in.user.Store(limiter(p.Cfg.MaxUserRate))
		in.pps.Store(ppsLimiter(p.Cfg.MaxUserPPS))
		p.users[key] = in
	}
	in.refs++
	b.in = in
	return b
}

// Category reports whether a dynamic policy has the category named.
func (p *Policy) Category(name string) bool { return p.cats[name] != nil }

// Instances is how many users a dynamic policy has now.
func (p *Policy) Instances() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.users)
}

// instance is a dynamic policy's user: its flows share its rates.
type instance struct {
	key string
	// user is the instance's max-user-rate, pps its max-user-rate-pps
	// (nil: none); BWC::rate and BWC::pps replace them while flows wait.
	user atomic.Pointer[rate.Limiter]
	pps  atomic.Pointer[rate.Limiter]
	refs int // flows of the instance, under the policy's mu
	// m is the instance's measurement (measure enabled, BWC::measure
	// ... session).
	m Measure
}

// noMark is a flow's mark before BWC::mark: the category's or the
// policy's apply.
const noMark = -2

// Bucket is what one attached flow waits on: its instance's rates (a
// dynamic policy), its category's, the policy's, at its priority level.
type Bucket struct {
	p  *Policy
	in *instance // nil for a static policy
	// cat is the flow's category (BWC::color set); nil: none.
	cat atomic.Pointer[category]
	// level is the flow's priority level (BWC::priority), 0 to Levels-1.
	level atomic.Int32
	// mark is what BWC::mark set, tos<<8|qos+1 packed (each 0 for
	// pass-through, else value+1), or noMark.
	mark atomic.Int32
	// fm is the flow's own measurement (BWC::measure ... flow); nil:
	// none.
	fm atomic.Pointer[Measure]
	// then is the rate class bucket the flow's bytes wait on after the
	// policy's (class.go); nil: none.
	then atomic.Pointer[Bucket]
}

// Policy is the policy b belongs to.
func (b *Bucket) Policy() *Policy { return b.p }

// Dynamic reports whether b is a dynamic policy's instance, whose rates
// SetRate and SetPPS change.
func (b *Bucket) Dynamic() bool { return b.in != nil }

// SetRate gives a dynamic instance bps bits per second in place of the
// policy's max-user-rate (BWC::rate), for every flow of the instance. 0
// lifts the instance's own limit (max-rate still holds).
func (b *Bucket) SetRate(bps uint64) { b.in.user.Store(limiter(bps)) }

// SetPPS gives a dynamic instance pps packets per second (BWC::pps); 0
// lifts the limit.
func (b *Bucket) SetPPS(pps uint64) { b.in.pps.Store(ppsLimiter(pps)) }

// SetCategory puts the flow in its policy's category named
// (BWC::color set); false when the policy has none of that name.
func (b *Bucket) SetCategory(name string) bool {
	c := b.p.cats[name]
	if c == nil {
		return false
	}
	b.cat.Store(c)
	if c.level >= 0 {
		b.level.Store(int32(c.level))
	}
	return true
}

// CategoryName is the flow's category; empty for none.
func (b *Bucket) CategoryName() string {
	if c := b.cat.Load(); c != nil {
		return c.name
	}
	return ""
}

// SetLevel gives the flow its priority level (BWC::priority); a level
// outside 0 to Levels-1 is refused.
func (b *Bucket) SetLevel(level int) bool {
	if level < 0 || level >= Levels {
		return false
	}
	b.level.Store(int32(level))
	return true
}

// SetMark gives the flow its own marking (BWC::mark), in place of its
// category's and policy's; -1 is pass-through.
func (b *Bucket) SetMark(m config.BWCMark) {
	b.mark.Store(int32((m.TOS+1)<<8 | (m.QoS + 1)))
}

// Mark is the marking of the flow's packets: BWC::mark's, else its
// category's (where not pass-through), else the policy's.
func (b *Bucket) Mark() config.BWCMark {
	if v := b.mark.Load(); v != noMark {
		return config.BWCMark{TOS: int(v>>8) - 1, QoS: int(v&0xff) - 1}
	}
	m := b.p.Cfg.Mark
	if c := b.cat.Load(); c != nil {
		if c.mark.TOS >= 0 {
			m.TOS = c.mark.TOS
		}
		if c.mark.QoS >= 0 {
			m.QoS = c.mark.QoS
		}
	}
	return m
}

// ppsLimiter is a packet bucket; nil for 0.
func ppsLimiter(pps uint64) *rate.Limiter {
	if pps == 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(pps), max(int(pps)/5, minBurst/packetBytes+1))
}

// Release ends one flow's use of b: a dynamic instance with no flow left
// is dropped. A nil b is fine.
func (b *Bucket) Release() {
	if b == nil {
		return
	}
	fm := b.fm.Load()
	if b.in == nil && fm == nil {
		return
	}
	p, in := b.p, b.in
	p.mu.Lock()
	defer p.mu.Unlock()
	if fm != nil {
		delete(p.flows, fm)
	}
	if in == nil {
		return
	}
	if in.refs--; in.refs <= 0 && p.users[in.key] == in {
		delete(p.users, in.key)
	}
}

// Wait blocks until n bytes of a stream may be written: the instance's
// rates first, then the policy's. A write larger than a bucket waits for
// it in parts.
func (b *Bucket) Wait(n int) {
	if n > 0 {
		b.wait(n, (n+packetBytes-1)/packetBytes)
	}
}

// WaitDatagram is Wait for one datagram of n bytes: one packet.
func (b *Bucket) WaitDatagram(n int) { b.wait(n, 1) }

func (b *Bucket) wait(n, pk int) {
	p := b.p
	now := time.Now()
	p.Passed.Add(uint64(n))
	p.PassedPkts.Add(uint64(pk))
	p.rate.add(now, uint64(n))
	p.m.add(now, n)
	if fm := b.fm.Load(); fm != nil {
		fm.add(now, n)
	}
	waited := false
	if in := b.in; in != nil {
		in.m.add(now, n)
		waited = waitBytes(in.user.Load(), n)
		if pps := in.pps.Load(); pps != nil {
			waited = waitBytes(pps, pk) || waited
		}
	}
	if c := b.cat.Load(); c != nil {
		c.m.add(now, n)
		waited = waitBytes(c.l, n) || waited
	}
	waited = p.waitAll(int(b.level.Load()), n, now) || waited
	if c := p.class; c != nil {
		waited = c.wait(n) || waited
	}
	if waited {
		p.Delayed.Add(uint64(n))
	}
}

// waitBytes takes n tokens of l, waiting as long as that takes; it
// reports whether it had to wait.
func waitBytes(l *rate.Limiter, n int) bool {
	if l == nil {
		return false
	}
	waited := false
	for n > 0 {
		k := min(n, l.Burst())
		r := l.ReserveN(time.Now(), k)
		if !r.OK() {
			return waited // a bucket changed under us: let it pass
		}
		if d := r.Delay(); d > 0 {
			waited = true
			t := time.NewTimer(d)
			<-t.C
		}
		n -= k
	}
	return waited
}

// yieldTime is how long a flow of a lower level sleeps while one of a
// higher level waits for the policy's bucket, before it looks again.
const yieldTime = 2 * time.Millisecond

// waitAll takes n bytes of the policy's bucket at priority level: with a
// priority group, each busy level within its share (priority.go);
// without, while a flow of a higher level waits for it, a lower one lets
// it go first.
func (p *Policy) waitAll(level, n int, now time.Time) bool {
	if p.all == nil {
		return false
	}
	if s := p.shares; s != nil {
		waited := s.wait(level, n, now)
		return waitBytes(p.all, n) || waited
	}
	p.active[level].Add(1)
	defer p.active[level].Add(-1)
	waited := false
	for p.higherWaiting(level) {
		waited = true
		time.Sleep(yieldTime)
	}
	return waitBytes(p.all, n) || waited
}

// higherWaiting reports whether a flow above level waits for the
// policy's bucket now.
func (p *Policy) higherWaiting(level int) bool {
	for l := level + 1; l < Levels; l++ {
		if p.active[l].Load() > 0 {
			return true
		}
	}
	return false
}
