package bwc

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// A rate class's queue discipline and drop policy (`net rate-shaping
// queue`, `drop-policy`) act where the class has queued units to act
// on: the datagrams of its UDP flows. BIG-IP describes a rate class as
// queueing packets and dequeuing them at its rate in the order its
// queue discipline gives, its drop policy deciding what a queue drops
// (https://techdocs.f5.com/kb/en-us/products/big-ip-aam/manuals/product/bigip-acceleration-concepts-13-0-0/4.html,
// https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/net/net_rate-shaping_drop-policy.html,
// https://clouddocs.f5.com/api/icontrol-rest/APIRef_tm_net_rate-shaping_drop-policy.html).
//
// sfq (BIG-IP's default) is each flow's own queue (Queue): each has
// one datagram at a time waiting on the class's buckets, so the busy
// flows are served a datagram each in turn and a flooding flow fills and
// drops only its own queue. openltm hashes no two flows together, so
// sfq-hash-buckets and sfq-perturbation-interval (which bound the harm
// of such collisions) have nothing to act on [M]. pfifo is one queue
// for the class (classFIFO): its flows' datagrams leave in the order
// they came, and one flow filling it makes every flow's datagrams drop.
//
// A drop policy watches the queue a datagram joins (the flow's with
// sfq, the class's with pfifo): tail drops only what a full queue has
// no room for; red (RFC 2309's random early detection, Floyd and
// Jacobson 1993) keeps an average of the queue's length and drops
// arriving datagrams at random once it passes min-threshold, more
// likely as it nears max-threshold, and all past it; fred (Lin and
// Morris 1997) is red that spares a flow with few datagrams queued and
// drops first from those with more than their share of the queue.
//
// [M] F5 does not document the units or what 0 means: openltm counts
// the thresholds in packets (datagrams) of the queue; max-probability
// is a percentage; inverse-weight is 1/w of the average (0: 512);
// average-packet-size is the bytes of a typical datagram, with which
// the average decays while the queue is idle as if such datagrams had
// left at the class's rate (0: 1000); red-hard-limit is the packets
// past which every datagram is dropped (0: the queue's own bound). A
// policy with thresholds 0 takes max-threshold half the queue's room
// in packets and min-threshold a third of that; max-probability 0 is
// 10%. fred-min-drop is the packets a flow may queue without an early
// drop (0: 2), fred-max-drop those past which its datagrams all drop
// (0: max-threshold), fred-max-active the flows that may have
// datagrams in a pfifo queue at once (0: any number).

// Drop reasons a queue counts (ClassStats): a full queue's, and the
// drop policy's before the queue was full.
const (
	dropNone = iota
	dropFull
	dropEarly
)

// dropper is one queue's drop policy and its state, used under the
// queue's lock.
type dropper struct {
	fred bool
	// minTh, maxTh and maxP are the thresholds (packets) and the most
	// likely drop between them; w the average's weight; hard the
	// packets past which all drop (0: none); minQ, maxQ and maxActive
	// FRED's.
	minTh, maxTh, maxP, w float64
	hard, minQ, maxQ      int
	maxActive             int
	// pktTime is how long a typical datagram takes at the class's rate,
	// for the average's decay while idle.
	pktTime time.Duration

	avg   float64
	count int // datagrams since the last early drop (RED's count)
	idle  time.Time
}

// newDropper is d's policy on a queue of room packets at bytesPerSec;
// nil for tail (a full queue drops, as without a policy).
func newDropper(d config.RateDrop, room int, bytesPerSec float64) *dropper {
	if d.Type == config.DropTail {
		return nil
	}
	pkt := d.AvgPacket
	if pkt <= 0 {
		pkt = 1000
	}
	dr := &dropper{fred: d.Type == config.DropFRED, hard: d.HardLimit, maxActive: d.MaxActive}
	maxTh, minTh := d.MaxThreshold, d.MinThreshold
	if maxTh <= 0 {
		maxTh = max(room/2, 2)
	}
	if minTh <= 0 {
		minTh = max(maxTh/3, 1)
	}
	minTh = min(minTh, maxTh)
	dr.minTh, dr.maxTh = float64(minTh), float64(maxTh)
	dr.maxP = 0.1
	if d.MaxProbability > 0 {
		dr.maxP = float64(d.MaxProbability) / 100
	}
	iw := d.InverseWeight
	if iw <= 0 {
		iw = 512
	}
	dr.w = 1 / float64(iw)
	dr.minQ = d.MinDrop
	if dr.minQ <= 0 {
		dr.minQ = 2
	}
	dr.maxQ = d.MaxDrop
	if dr.maxQ <= 0 {
		dr.maxQ = maxTh
	}
	if bytesPerSec > 0 {
		dr.pktTime = time.Duration(float64(pkt) / bytesPerSec * float64(time.Second))
	}
	return dr
}

// arrive decides for a datagram arriving at a queue holding qlen
// datagrams, flowLen of them its flow's, with active flows queued
// (FRED's share): drop it early or let it join (if the queue has room).
func (d *dropper) arrive(now time.Time, qlen, flowLen, active int) bool {
	if qlen == 0 && !d.idle.IsZero() && d.pktTime > 0 {
		// Floyd and Jacobson: while idle the average decays as if m
		// typical datagrams had left.
		m := float64(now.Sub(d.idle)) / float64(d.pktTime)
		d.avg *= math.Pow(1-d.w, m)
	} else {
		d.avg += d.w * (float64(qlen) - d.avg)
	}
	d.idle = time.Time{}
	if d.hard > 0 && qlen >= d.hard {
		return true
	}
	if d.fred {
		if flowLen >= d.maxQ || d.maxActive > 0 && flowLen == 0 && active >= d.maxActive {
			return true
		}
		// A flow below its share of the average queue (and at least
		// FRED's least) is spared; past max-threshold only a flow with
		// twice its share drops.
		least := max(float64(d.minQ), d.avg/float64(max(active, 1)))
		if d.avg >= d.maxTh {
			d.count = 0
			return float64(flowLen) >= 2*least
		}
		if float64(flowLen) < least {
			d.count = -1
			return false
		}
	}
	switch {
	case d.avg < d.minTh:
		d.count = -1
		return false
	case d.avg >= d.maxTh:
		d.count = 0
		return true
	}
	d.count++
	pb := d.maxP * (d.avg - d.minTh) / (d.maxTh - d.minTh)
	pa := 1.0
	if c := float64(d.count) * pb; c < 1 {
		pa = pb / (1 - c)
	}
	if rand.Float64() < pa {
		d.count = 0
		return true
	}
	return false
}

// emptied notes that the queue has just become empty (the average's
// idle decay starts).
func (d *dropper) emptied(now time.Time) { d.idle = now }

// classSender is a flow's Queue as a class's FIFO sends for it.
type classSender interface {
	// emitClass sends d to to (the Queue's T) unless the flow's queue
	// was closed.
	emitClass(to any, d []byte)
	// fifoCount is the flow's datagrams in the class's FIFO, under its
	// lock.
	fifoCount() *int
	// gone reports whether the flow's queue was closed: its datagrams
	// still in the FIFO leave without waiting.
	gone() bool
}

// classFIFO is a pfifo rate class's one queue: its flows' datagrams of
// the class's directions wait in it in the order they came, and one
// goroutine (started while it is not empty) sends them as the class's
// buckets allow.
type classFIFO struct {
	b          *Bucket // on the class, for its waits and counters
	limitBytes int
	limitPkts  int // 0: none

	mu      sync.Mutex
	drop    *dropper
	items   []fifoItem
	bytes   int
	active  int // flows with datagrams queued (FRED's share)
	running bool
}

type fifoItem struct {
	s  classSender
	to any
	d  []byte
}

// newClassFIFO is the FIFO of class p (a rate class's policy).
func newClassFIFO(p *Policy) *classFIFO {
	c := p.class
	f := &classFIFO{b: &Bucket{p: p}, limitBytes: c.queueLimit(), limitPkts: c.cfg.Queue.Limit}
	f.b.mark.Store(noMark)
	room := f.limitPkts
	if room == 0 {
		room = f.limitBytes / packetBytes
	}
	f.drop = newDropper(c.cfg.Drop, room, float64(c.cfg.Rate)/8)
	return f
}

// send queues a copy of d for s's flow; it reports the drop reason
// (dropNone: queued).
func (f *classFIFO) send(s classSender, to any, d []byte) int {
	now := time.Now()
	f.mu.Lock()
	n := s.fifoCount()
	why := dropNone
	switch {
	case f.drop != nil && f.drop.arrive(now, len(f.items), *n, f.active):
		why = dropEarly
	case (f.bytes > 0 && f.bytes+len(d) > f.limitBytes) || (f.limitPkts > 0 && len(f.items) >= f.limitPkts):
		why = dropFull
	}
	if why != dropNone {
		f.mu.Unlock()
		return why
	}
	if *n == 0 {
		f.active++
	}
	*n++
	f.items = append(f.items, fifoItem{s, to, append([]byte(nil), d...)})
	f.bytes += len(d)
	start := !f.running
	f.running = true
	f.mu.Unlock()
	if start {
		go f.drain()
	}
	return dropNone
}

func (f *classFIFO) drain() {
	for {
		f.mu.Lock()
		if len(f.items) == 0 {
			f.running = false
			if f.drop != nil {
				f.drop.emptied(time.Now())
			}
			f.mu.Unlock()
			return
		}
		it := f.items[0]
		f.items[0] = fifoItem{}
		f.items = f.items[1:]
		f.mu.Unlock()
		gone := it.s.gone()
		if !gone {
			f.b.wait(len(it.d), 1)
		}
		f.mu.Lock()
		f.bytes -= len(it.d)
		if n := it.s.fifoCount(); *n > 0 {
			if *n--; *n == 0 {
				f.active--
			}
		}
		f.mu.Unlock()
		if !gone {
			it.s.emitClass(it.to, it.d)
		}
	}
}

// queueDrops are a class's drops by reason, packets (ClassStats).
type queueDrops struct {
	full, early atomic.Uint64
}

func (q *queueDrops) count(why int) {
	switch why {
	case dropFull:
		q.full.Add(1)
	case dropEarly:
		q.early.Add(1)
	}
}
