// Package flows is the connection table: every proxied flow, sharded by id so
// that opening and closing flows on many cores never meets one global lock,
// and walked shard by shard so that `show sys connection` streams 100,000
// flows without copying the table.
package flows

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Traffic counts one side of a flow. Fields are updated by the flow's copy
// loops and read by shows without locks.
type Traffic struct {
	BytesIn, BytesOut, PktsIn, PktsOut atomic.Uint64
}

// Counter is where a flow that no client opened (a relay a protocol or a
// rule set up for a connection: an FTP data connection, an RTSP media
// channel, a rule's UDP listen) counts itself and its bytes: its virtual
// server's Ephemeral counters (state.Counters), apart from its clients'.
type Counter interface {
	TryOpen(limit int) bool
	Close()
	In(n int, pk uint64)
	Out(n int, pk uint64)
}

// Leg is one server-side connection of a client flow: plain L4 flows have at
// most one, message-based flows one per member they talk to.
type Leg struct {
	// Client is the server side's source (SNAT or the client's own address).
	Client netip.AddrPort
	// Server is the member's address.
	Server netip.AddrPort
	// Pool and Member name where the leg goes (full paths).
	Pool, Member string
	// Owner is the dataplane's member record, so that a member going down
	// can find its flows.
	Owner any
	Traffic
}

// Flow is one client connection and its server legs.
type Flow struct {
	id uint64
	// Client is the client's address (cs-client).
	Client netip.AddrPort
	// Local is the address the client reached (cs-server).
	Local netip.AddrPort
	// Virtual is the virtual server's full path.
	Virtual  string
	Protocol string
	// Arrival is the index of the interface the client's connection or
	// first datagram arrived on, when a packet filter needed it at
	// admission (0: not read): established filtering matches the flow
	// again with it (dataplane/pktfilter). Set before Add.
	Arrival    int32
	created    int64
	lastActive atomic.Int64
	// idleTimeout is the flow's idle timeout in nanoseconds (0: none),
	// atomic because a rule may change it (IP::idle_timeout) while a
	// show reads it.
	idleTimeout atomic.Int64
	// Closer ends the flow: reset true resets both sides (delete sys
	// connection, idle timeout); false closes the server side and lets the
	// client go quietly (service-down-action drop). Set before Add.
	Closer func(reset bool)
	// End does what Closer does, for the engines that make a flow per
	// connection: a method value as Closer is an allocation per
	// connection, an interface holding the connection's own pointer is
	// not. Set one of the two before Add; End is asked first.
	End Ender
	Traffic

	// evicted is set once an eviction policy chose the flow
	// (dataplane/evict), so that the next round does not count or
	// choose it again while its reset is on its way.
	evicted atomic.Bool

	mu   sync.Mutex
	legs atomic.Pointer[[]*Leg]
	// first holds the flow's first leg, the only one most flows have,
	// so that attaching it allocates nothing; used once, because a
	// reader may still hold the slice after the leg is removed.
	first      [1]*Leg
	firstSlice []*Leg
	firstUsed  bool
}

// Ender ends a flow from outside its engine (delete sys connection,
// eviction, service-down-action): reset true resets both sides, false
// closes the server side and lets the client go quietly.
type Ender interface{ EndFlow(reset bool) }

// ID is the flow's table key, unique for the table's life.
func (f *Flow) ID() uint64 { return f.id }

// Abort resets both sides and ends the flow.
func (f *Flow) Abort() {
	if f.End != nil {
		f.End.EndFlow(true)
	} else if f.Closer != nil {
		f.Closer(true)
	}
}

// Drop ends the flow without resetting the client.
func (f *Flow) Drop() {
	if f.End != nil {
		f.End.EndFlow(false)
	} else if f.Closer != nil {
		f.Closer(false)
	}
}

// MarkEvicted marks the flow chosen by an eviction policy; false when
// it was already chosen, so that one flow is reset and counted once.
func (f *Flow) MarkEvicted() bool { return f.evicted.CompareAndSwap(false, true) }

// Evicted reports whether an eviction policy chose the flow.
func (f *Flow) Evicted() bool { return f.evicted.Load() }

// Created is when the flow entered the table.
func (f *Flow) Created() time.Time { return time.Unix(0, f.created) }

// SetIdleTimeout sets the flow's idle timeout (0: none): the L4 and UDP
// engines enforce this value, the connection table shows it.
func (f *Flow) SetIdleTimeout(d time.Duration) { f.idleTimeout.Store(int64(d)) }

// IdleTimeout is the flow's idle timeout (0: none).
func (f *Flow) IdleTimeout() time.Duration { return time.Duration(f.idleTimeout.Load()) }

// Touch records activity now; the idle timer measures from the last Touch.
func (f *Flow) Touch(now int64) { f.lastActive.Store(now) }

// LastActive is the time of the last Touch, in Unix nanoseconds.
func (f *Flow) LastActive() int64 { return f.lastActive.Load() }

// Legs returns the current server legs; the slice must not be modified.
func (f *Flow) Legs() []*Leg {
	if p := f.legs.Load(); p != nil {
		return *p
	}
	return nil
}

// AddLeg attaches a server-side connection.
func (f *Flow) AddLeg(l *Leg) {
	f.mu.Lock()
	old := f.Legs()
	if len(old) == 0 && !f.firstUsed {
		f.firstUsed = true
		f.first[0] = l
		f.firstSlice = f.first[:]
		f.legs.Store(&f.firstSlice)
		f.mu.Unlock()
		return
	}
	n := make([]*Leg, len(old), len(old)+1)
	copy(n, old)
	n = append(n, l)
	f.legs.Store(&n)
	f.mu.Unlock()
}

// RemoveLeg detaches a server-side connection.
func (f *Flow) RemoveLeg(l *Leg) {
	f.mu.Lock()
	old := f.Legs()
	n := make([]*Leg, 0, len(old))
	for _, x := range old {
		if x != l {
			n = append(n, x)
		}
	}
	f.legs.Store(&n)
	f.mu.Unlock()
}

const shardCount = 256

type shard struct {
	mu sync.Mutex
	m  map[uint64]*Flow
}

// Table holds the flows of one dataplane.
type Table struct {
	next   atomic.Uint64
	count  atomic.Int64
	shards [shardCount]shard
}

// NewTable returns an empty table.
func NewTable() *Table {
	t := &Table{}
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]*Flow)
	}
	return t
}

// Add gives f an id and puts it in the table.
func (t *Table) Add(f *Flow) {
	f.id = t.next.Add(1)
	now := time.Now().UnixNano()
	f.created = now
	f.lastActive.Store(now)
	s := &t.shards[f.id%shardCount]
	s.mu.Lock()
	s.m[f.id] = f
	s.mu.Unlock()
	t.count.Add(1)
}

// Remove takes f out of the table; removing twice is harmless.
func (t *Table) Remove(f *Flow) {
	s := &t.shards[f.id%shardCount]
	s.mu.Lock()
	_, ok := s.m[f.id]
	delete(s.m, f.id)
	s.mu.Unlock()
	if ok {
		t.count.Add(-1)
	}
}

// Len is the number of flows in the table.
func (t *Table) Len() int { return int(t.count.Load()) }

// Each calls fn for every flow until fn returns false. It holds one shard's
// lock only while copying that shard's pointers, so fn may block (write to a
// slow terminal) without stalling new connections.
func (t *Table) Each(fn func(*Flow) bool) {
	var batch []*Flow
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		batch = batch[:0]
		for _, f := range s.m {
			batch = append(batch, f)
		}
		s.mu.Unlock()
		for _, f := range batch {
			if !fn(f) {
				return
			}
		}
	}
}
