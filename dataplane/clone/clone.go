// Package clone mirrors a virtual server's traffic to its clone pools
// (BIG-IP's clone-pools { POOL { context clientside|serverside } }): an
// intrusion detection system or a shadow service gets a copy of what the
// clients send and never answers them.
//
// BIG-IP copies packets of both directions at layer 2. openltm is a socket
// proxy, so it mirrors the byte stream instead: for each client connection
// (on a message-balanced virtual, each request) every clone pool gives one
// member by its own load balancing, a connection is opened to it, and the
// client's bytes are written to it; clientside pools get the bytes as the
// client sent them, serverside pools the bytes as the member of the default
// pool gets them, after rewriting. Only client-to-server bytes are mirrored
// (a socket proxy sees no packets of the other direction to copy as such).
// What a clone member sends back is read and thrown away.
//
// The copy never slows the real flow down: the data path hands bytes to a
// Conn, which copies them into a bounded buffer and returns at once; a
// goroutine of the Conn connects and writes. When the clone member is slower
// than the traffic and the buffer would overflow, or its connect fails, the
// clone connection is dropped (and counted), never the flow.
package clone

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLimit is how many bytes a clone connection holds unwritten before
// it is dropped, when Set.Limit is 0: enough for the bytes of a fast
// client that arrive while the clone member's connect is under way, and
// for bursts against a member that keeps up on average.
const DefaultLimit = 1 << 20

// DefaultConnectTimeout bounds a clone member's connect when
// Set.ConnectTimeout is 0.
const DefaultConnectTimeout = 5 * time.Second

// drainTime bounds how long a clone connection whose flow ended waits for
// the member to close after the last bytes went, reading what it sends.
const drainTime = 2 * time.Second

// Counters are what a virtual server shows of its clones, summed over its
// clone pools.
type Counters struct {
	// Conns counts clone connections opened to clone members.
	Conns atomic.Uint64
	// Bytes counts bytes written to clone members.
	Bytes atomic.Uint64
	// Dropped counts copies given up: no clone member available, the
	// connect failed, or the member was slower than the traffic.
	Dropped atomic.Uint64
}

// Reset zeroes the counters (reset-stats).
func (c *Counters) Reset() {
	c.Conns.Store(0)
	c.Bytes.Store(0)
	c.Dropped.Store(0)
}

// Dest is one clone member chosen for a copy, with the accounting its pool
// keeps of it. Sent and Done may be nil.
type Dest struct {
	Addr netip.AddrPort
	// Sent is told of bytes the member took.
	Sent func(n int)
	// Done is called once when the clone connection ends; connected says
	// whether its connect succeeded (inband monitors hear of it).
	Done func(connected bool)
}

// Target is one clone pool of a virtual: how a member is chosen, and which
// side's bytes it gets.
type Target struct {
	// Pick chooses a member by the pool's load balancing, counting the
	// connection on it; ok false when none can take one.
	Pick func() (d Dest, ok bool)
	// Server: context serverside, the bytes as the default pool's member
	// gets them; otherwise clientside, the bytes as the client sent them.
	Server bool
}

// Set is a virtual's clone pools in one configuration generation; the data
// paths hold a nil *Set when the virtual has none, and pay nothing more.
type Set struct {
	Targets []Target
	// Counters is the virtual's (kept across commits).
	Counters *Counters
	// Limit is the unwritten bytes a clone connection may hold; 0 is
	// DefaultLimit.
	Limit int
	// ConnectTimeout bounds a clone member's connect; 0 is
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Dial, when set, opens the connection (tests); nil dials TCP.
	Dial func(ctx context.Context, dst netip.AddrPort) (net.Conn, error)
}

// HasServer reports whether some clone pool wants the serverside bytes,
// for paths where they differ from the client's and cost a copy.
func (s *Set) HasServer() bool {
	for _, t := range s.Targets {
		if t.Server {
			return true
		}
	}
	return false
}

// Flow is the clone connections of one client connection (or one request):
// one per clone pool that had a member to give.
type Flow struct {
	conns []*Conn
}

// Start opens the clone connections of a new flow; nil when s is nil or no
// clone pool gave a member. Connects run in the background: Start never
// waits on the network.
func (s *Set) Start() *Flow {
	if s == nil || len(s.Targets) == 0 {
		return nil
	}
	var f *Flow
	s.pick(func(d Dest, server bool) {
		if f == nil {
			f = &Flow{conns: make([]*Conn, 0, len(s.Targets))}
		}
		f.conns = append(f.conns, s.open(d, server))
	})
	return f
}

// Add opens one more clone connection, to d, for the flow f (nil: a new
// flow, which it returns): a rule's clone command, which copies one
// connection where the virtual's clone pools copy them all. Like Start
// it never waits on the network. s gives the counters and limits; it
// may have no Targets.
func (s *Set) Add(f *Flow, d Dest, server bool) *Flow {
	if f == nil {
		f = &Flow{}
	}
	f.conns = append(f.conns, s.open(d, server))
	return f
}

// With is Add for a flow that goroutines other than the caller's may be
// writing to (an HTTP/2 client's lanes): f is left as it is, and a new
// flow with f's clone connections and one more, to d, is returned for
// the caller to publish; closing it closes f's connections too.
func (s *Set) With(f *Flow, d Dest, server bool) *Flow {
	n := &Flow{}
	if f != nil {
		n.conns = make([]*Conn, len(f.conns), len(f.conns)+1)
		copy(n.conns, f.conns)
	}
	n.conns = append(n.conns, s.open(d, server))
	return n
}

// Join is f's clone connections and g's as one flow, a new one when both
// have some, so that a goroutine still holding f reads it unchanged (a
// rule's clone added while the member's side may write to f); either
// may be nil.
func (f *Flow) Join(g *Flow) *Flow {
	if f == nil || len(f.conns) == 0 {
		return g
	}
	if g == nil || len(g.conns) == 0 {
		return f
	}
	n := &Flow{conns: make([]*Conn, 0, len(f.conns)+len(g.conns))}
	n.conns = append(append(n.conns, f.conns...), g.conns...)
	return n
}

// pick asks each clone pool for a member and hands it to use; a pool with
// none to give is counted as a drop.
func (s *Set) pick(use func(d Dest, server bool)) {
	for _, t := range s.Targets {
		d, ok := t.Pick()
		if !ok {
			s.Counters.Dropped.Add(1)
			continue
		}
		use(d, t.Server)
	}
}

// Client mirrors bytes as the client sent them to the clientside pools.
func (f *Flow) Client(p []byte) { f.write(p, false) }

// Server mirrors bytes as they go to the member to the serverside pools.
func (f *Flow) Server(p []byte) { f.write(p, true) }

// Both mirrors bytes that are the same on both sides (a flow nothing
// rewrites) to every clone pool.
func (f *Flow) Both(p []byte) {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		c.Write(p)
	}
}

func (f *Flow) write(p []byte, server bool) {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		if c.server == server {
			c.Write(p)
		}
	}
}

// Close ends the clone connections once what they hold is written: the
// client's FIN, mirrored.
func (f *Flow) Close() {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		c.Close()
	}
}

// Abort drops the clone connections at once: the flow was reset.
func (f *Flow) Abort() {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		c.Abort()
	}
}

// Conn is one clone connection: bytes wait in a bounded buffer until its
// goroutine writes them to the clone member.
type Conn struct {
	set    *Set
	dest   Dest
	server bool
	limit  int

	mu      sync.Mutex
	pending []byte   // bytes not yet handed to the writer
	conn    net.Conn // set once connected
	closing bool     // no more bytes: FIN after the pending ones
	dead    bool     // dropped or aborted: nothing more is written
	wake    chan struct{}
	done    chan struct{} // closed when the Conn's goroutine ends
}

// open starts a clone connection to d.
func (s *Set) open(d Dest, server bool) *Conn {
	limit := s.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	c := &Conn{set: s, dest: d, server: server, limit: limit,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c
}

// Write copies p for the clone member and returns at once; when the
// member is so far behind that the buffer would overflow, the clone
// connection is dropped instead.
func (c *Conn) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	c.mu.Lock()
	if c.dead || c.closing {
		c.mu.Unlock()
		return
	}
	if len(c.pending)+len(p) > c.limit {
		c.dropLocked()
		c.mu.Unlock()
		return
	}
	c.pending = append(c.pending, p...)
	c.mu.Unlock()
	c.signal()
}

// Close asks for a FIN after the bytes the connection holds, which the
// member has drainTime to take: a member that stopped reading cannot keep
// the connection beyond it.
func (c *Conn) Close() {
	c.mu.Lock()
	if !c.closing {
		c.closing = true
		if c.conn != nil {
			c.conn.SetWriteDeadline(time.Now().Add(drainTime))
		}
	}
	c.mu.Unlock()
	c.signal()
}

// Abort ends the clone connection at once, dropping what it holds; it is
// not counted as a drop (the flow itself ended so).
func (c *Conn) Abort() {
	c.mu.Lock()
	if !c.dead {
		c.dead = true
		if c.conn != nil {
			c.conn.Close()
		}
	}
	c.mu.Unlock()
	c.signal()
}

// Wait blocks until the connection's goroutine has ended (tests).
func (c *Conn) Wait() { <-c.done }

// Wait blocks until every clone connection of the flow has ended (tests).
func (f *Flow) Wait() {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		c.Wait()
	}
}

// dropLocked gives the clone connection up and counts it; c.mu is held.
func (c *Conn) dropLocked() {
	if c.dead {
		return
	}
	c.dead = true
	c.pending = nil
	c.set.Counters.Dropped.Add(1)
	if c.conn != nil {
		c.conn.Close() // unblocks a write the member does not take
	}
}

func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run connects, then writes what Write hands over until Close or a drop.
func (c *Conn) run() {
	defer close(c.done)
	connected := false
	defer func() {
		if c.dest.Done != nil {
			c.dest.Done(connected)
		}
	}()
	nc, err := c.dial()
	c.mu.Lock()
	if err != nil {
		c.dropLocked()
		c.mu.Unlock()
		return
	}
	connected = true
	c.set.Counters.Conns.Add(1)
	if c.dead {
		c.mu.Unlock()
		nc.Close()
		return
	}
	c.conn = nc
	if c.closing {
		nc.SetWriteDeadline(time.Now().Add(drainTime))
	}
	c.mu.Unlock()
	read := make(chan struct{})
	go func() { // what the member answers is thrown away; ends with nc
		io.Copy(io.Discard, nc)
		close(read)
	}()
	var out []byte
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && !c.closing && !c.dead {
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		if c.dead {
			c.mu.Unlock()
			nc.Close()
			return
		}
		out, c.pending = c.pending, out[:0]
		closing := c.closing && len(out) == 0
		c.mu.Unlock()
		if closing {
			c.finish(nc, read)
			return
		}
		n, err := nc.Write(out)
		if n > 0 {
			c.set.Counters.Bytes.Add(uint64(n))
			if c.dest.Sent != nil {
				c.dest.Sent(n)
			}
		}
		if err != nil {
			c.mu.Lock()
			c.dropLocked()
			c.mu.Unlock()
			nc.Close()
			return
		}
	}
}

// finish sends the FIN and gives the member a moment to close its side
// (read, the discarding reader, ends then), so that closing with unread
// bytes does not reset what it still processes.
func (c *Conn) finish(nc net.Conn, read <-chan struct{}) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		t := time.NewTimer(drainTime)
		select {
		case <-read:
		case <-t.C:
		}
		t.Stop()
	}
	nc.Close()
}

func (c *Conn) dial() (net.Conn, error) {
	to := c.set.ConnectTimeout
	if to <= 0 {
		to = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), to)
	defer cancel()
	if c.set.Dial != nil {
		return c.set.Dial(ctx, c.dest.Addr)
	}
	d := net.Dialer{KeepAlive: -1}
	return d.DialContext(ctx, "tcp", c.dest.Addr.String())
}
