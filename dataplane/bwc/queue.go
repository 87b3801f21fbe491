package bwc

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// queueSeconds is how much of a bucket's rate a datagram flow's queue holds
// before it drops: half a second's worth [M: BIG-IP queues a policy's
// packets in its own buffers and drops beyond them; openltm keeps each
// flow's queue to what the rate drains in half a second].
const queueSeconds = 0.5

// minQueue is the least a flow's queue holds, so that a burst of a few
// full datagrams waits rather than drops on a slow policy.
const minQueue = 64 << 10

// Queue paces one direction of a datagram flow on a bucket: a datagram
// is copied and queued while the queue holds less than its bound, and
// one goroutine (started while the queue is not empty, gone when it is)
// sends them in order as the bucket allows. Datagrams beyond the bound
// are dropped and counted on the policy, as BIG-IP drops what exceeds a
// bandwidth controller. T is what the sender needs besides the bytes
// (the member's leg of a flow, say).
type Queue[T any] struct {
	b     *Bucket
	out   func(T, []byte)
	limit int
	// dir is the way the datagrams go, for a rate class that shapes one
	// direction only (NewQueueDir): dirAny, dirToServer or dirToClient.
	dir int8

	// x is what a rate class's queue discipline and drop policy add
	// (qdisc.go); nil for a class with sfq and tail, and off a class.
	x *queueExtra

	mu      sync.Mutex
	maxPkts int // SetMaxPackets; 0: none
	items   []queued[T]
	bytes   int
	running bool
	closed  bool
}

type queued[T any] struct {
	to T
	d  []byte
}

// NewQueue is a queue on b sending with out.
func NewQueue[T any](b *Bucket, out func(T, []byte)) *Queue[T] {
	limit := minQueue
	if r := b.p.Cfg.MaxRate; r > 0 {
		limit = max(limit, int(float64(r)/8*queueSeconds))
	}
	if r := b.p.Cfg.MaxUserRate; r > 0 && b.Dynamic() {
		limit = max(minQueue, min(limit, int(float64(r)/8*queueSeconds)))
	}
	if c := b.p.class; c != nil {
		// A rate class's flow: half a second of its ceiling.
		limit = c.queueLimit()
	} else if t := b.then.Load(); t != nil {
		// A rate class after the policy: the narrower of the two.
		limit = min(limit, t.p.class.queueLimit())
	}
	return &Queue[T]{b: b, out: out, limit: limit}
}

// queueLimit is a datagram queue's bound on a rate class: half a second
// of its ceiling, at least minQueue.
func (c *classNode) queueLimit() int {
	return max(minQueue, int(min(float64(c.cfg.Ceiling)/8*queueSeconds, float64(1<<30))))
}

// Directions of a Queue (NewQueueDir).
const (
	dirAny int8 = iota
	dirToServer
	dirToClient
)

// NewQueueDir is NewQueue for the datagrams going to the server
// (toServer) or to the client: a rate class on b, or chained after b's
// policy (SetClass), shapes only those of its direction, as WaitDir does
// a stream's bytes.
func NewQueueDir[T any](b *Bucket, toServer bool, out func(T, []byte)) *Queue[T] {
	q := NewQueue(b, out)
	q.dir = dirToClient
	if toServer {
		q.dir = dirToServer
	}
	q.x = newQueueExtra(b, toServer, q.limit)
	if q.x != nil && q.x.depth > 0 {
		q.maxPkts = q.x.depth
	}
	return q
}

// queueExtra is a Queue's rate class's queue discipline and drop
// policy (qdisc.go).
type queueExtra struct {
	cls *Policy // the class's policy, whose drops it counts
	// fifo is a pfifo class's queue, which the datagrams join once
	// they passed the flow's policy (own: the flow is on the class's
	// own bucket and has no policy to wait on); nil for sfq.
	fifo *classFIFO
	own  bool
	// drop is an sfq flow's queue's drop policy (nil: tail); depth its
	// bound in packets (sfq-bucket-depth; 0: none).
	drop  *dropper
	depth int
	// inFIFO is the flow's datagrams in fifo, under fifo's lock.
	inFIFO int
}

// newQueueExtra is the class's part in a Queue on b of the datagrams
// going to the server (toServer) or to the client, limit bytes; nil
// when b is in no class, the class does not shape that direction, or
// it has sfq and tail (BIG-IP's defaults), which are the Queue alone.
func newQueueExtra(b *Bucket, toServer bool, limit int) *queueExtra {
	cb := b
	if b.p.class == nil {
		if cb = b.then.Load(); cb == nil {
			return nil
		}
	}
	cls := cb.p
	c := cls.class
	if !c.applies(toServer) || c.cfg.Queue == (config.RateQueue{}) && c.cfg.Drop.Type == config.DropTail {
		return nil
	}
	x := &queueExtra{cls: cls, own: cb == b}
	if c.cfg.Queue.FIFO {
		x.fifo = cls.fifo()
		return x
	}
	x.depth = c.cfg.Queue.Depth
	room := x.depth
	if room == 0 {
		room = limit / packetBytes
	}
	x.drop = newDropper(c.cfg.Drop, room, float64(c.cfg.Rate)/8)
	return x
}

// fifo is a pfifo class's queue, made on first use.
func (p *Policy) fifo() *classFIFO {
	c := p.class
	if f := c.fifoQ.Load(); f != nil {
		return f
	}
	c.fifoQ.CompareAndSwap(nil, newClassFIFO(p))
	return c.fifoQ.Load()
}

// Send queues a copy of d for to; false when the queue is full (or
// closed) and d is dropped.
func (q *Queue[T]) Send(to T, d []byte) bool {
	if x := q.x; x != nil && x.own && x.fifo != nil {
		// A pfifo class's flow with no policy: straight to the class's
		// queue.
		return q.toFIFO(to, d)
	}
	q.mu.Lock()
	why := dropNone
	switch {
	case q.closed:
		why = dropFull
	case q.x != nil && q.x.drop != nil && q.x.drop.arrive(time.Now(), len(q.items), len(q.items), 1):
		why = dropEarly
	case (q.bytes > 0 && q.bytes+len(d) > q.limit) || (q.maxPkts > 0 && len(q.items) >= q.maxPkts):
		why = dropFull
	}
	if why != dropNone {
		q.mu.Unlock()
		q.dropped(len(d), why)
		return false
	}
	q.items = append(q.items, queued[T]{to, append([]byte(nil), d...)})
	q.bytes += len(d)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.drain()
	}
	return true
}

// dropped counts a datagram of n bytes q dropped (why: dropFull or
// dropEarly) on its policy and on the rate class it is in.
func (q *Queue[T]) dropped(n, why int) {
	p := q.b.p
	p.Dropped.Add(uint64(n))
	p.DroppedPkts.Add(1)
	var cls *Policy
	if p.class != nil {
		cls = p
	} else if t := q.b.then.Load(); t != nil {
		// A rate class after the policy: its Dropped counts it too.
		cls = t.p
		cls.Dropped.Add(uint64(n))
		cls.DroppedPkts.Add(1)
	}
	if cls != nil {
		cls.class.drops.count(why)
	}
}

// toFIFO puts d in the pfifo class's queue, counting a drop on the
// flow's policy (and the class).
func (q *Queue[T]) toFIFO(to T, d []byte) bool {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	why := dropFull
	if !closed {
		why = q.x.fifo.send(q, to, d)
	}
	if why != dropNone {
		q.dropped(len(d), why)
		return false
	}
	return true
}

func (q *Queue[T]) emitClass(to any, d []byte) {
	if !q.gone() {
		q.out(to.(T), d)
	}
}

func (q *Queue[T]) fifoCount() *int { return &q.x.inFIFO }

func (q *Queue[T]) gone() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

func (q *Queue[T]) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 || q.closed {
			q.running = false
			if x := q.x; x != nil && x.drop != nil {
				x.drop.emptied(time.Now())
			}
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = queued[T]{}
		q.items = q.items[1:]
		q.mu.Unlock()
		fifo := q.x != nil && q.x.fifo != nil
		switch {
		case fifo:
			// The policy's bucket, then the pfifo class's queue.
			q.b.WaitDatagram(len(it.d))
		case q.dir == dirAny:
			q.b.WaitDatagram(len(it.d))
		default:
			q.b.WaitDatagramDir(len(it.d), q.dir == dirToServer)
		}
		q.mu.Lock()
		q.bytes -= len(it.d)
		closed := q.closed
		q.mu.Unlock()
		if closed {
			continue
		}
		if fifo {
			q.toFIFO(it.to, it.d)
			continue
		}
		q.out(it.to, it.d)
	}
}

// Close drops what is queued; what Send gives afterwards is dropped.
func (q *Queue[T]) Close() {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
}

// Conn paces a stream connection on a bucket: the bytes read wait on it
// after they are read (holding back what the client sends, as TCP's
// window then does), the bytes written wait before they are written. A
// message-based (http) virtual's clients go through one, so that their
// requests' and responses' bodies pass at the policy's rate. Its bucket
// may change while it runs (a rule's BWC::policy attach or detach);
// without one the bytes pass at once. A rule's IP::ingress_rate_limit
// holds its reads back too (SetIngress).
type Conn struct {
	net.Conn
	b  atomic.Pointer[Bucket]
	in atomic.Pointer[Ingress]
}

// PacedConn is c on b (nil: none yet).
func PacedConn(c net.Conn, b *Bucket) *Conn {
	pc := &Conn{Conn: c}
	if b != nil {
		pc.b.Store(b)
	}
	return pc
}

// Swap puts c on b (nil: none) and returns the bucket it was on.
func (c *Conn) Swap(b *Bucket) *Bucket { return c.b.Swap(b) }

// Bucket is the bucket c is on; nil for none.
func (c *Conn) Bucket() *Bucket { return c.b.Load() }

// SetIngress limits the client's packets read from c (nil: no limit).
func (c *Conn) SetIngress(ig *Ingress) { c.in.Store(ig) }

// Ingress is c's limit on the client's packets; nil for none.
func (c *Conn) Ingress() *Ingress { return c.in.Load() }

// Read implements net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ig := c.in.Load(); ig != nil {
			ig.Wait(n)
		}
		if b := c.b.Load(); b != nil {
			b.WaitDir(n, true)
		}
	}
	return n, err
}

// Write implements net.Conn.
func (c *Conn) Write(p []byte) (int, error) {
	if b := c.b.Load(); b != nil {
		b.WaitDir(len(p), false)
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection underneath when it can.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// NetConn is the connection underneath.
func (c *Conn) NetConn() net.Conn { return c.Conn }
