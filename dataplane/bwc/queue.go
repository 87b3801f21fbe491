package bwc

import (
	"net"
	"sync"
	"sync/atomic"
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
	return q
}

// Send queues a copy of d for to; false when the queue is full (or
// closed) and d is dropped.
func (q *Queue[T]) Send(to T, d []byte) bool {
	q.mu.Lock()
	if q.closed || (q.bytes > 0 && q.bytes+len(d) > q.limit) || (q.maxPkts > 0 && len(q.items) >= q.maxPkts) {
		q.mu.Unlock()
		p := q.b.p
		p.Dropped.Add(uint64(len(d)))
		p.DroppedPkts.Add(1)
		if t := q.b.then.Load(); t != nil {
			// A rate class after the policy: its Dropped counts it too.
			t.p.Dropped.Add(uint64(len(d)))
			t.p.DroppedPkts.Add(1)
		}
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

func (q *Queue[T]) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 || q.closed {
			q.running = false
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = queued[T]{}
		q.items = q.items[1:]
		q.mu.Unlock()
		if q.dir == dirAny {
			q.b.WaitDatagram(len(it.d))
		} else {
			q.b.WaitDatagramDir(len(it.d), q.dir == dirToServer)
		}
		q.mu.Lock()
		q.bytes -= len(it.d)
		closed := q.closed
		q.mu.Unlock()
		if closed {
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
