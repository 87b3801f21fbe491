package state

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// fakeQueueClock is a queue clock the test moves by hand.
type fakeQueueClock struct {
	mu     sync.Mutex
	now    int64
	timers []*fakeTimer
}

type fakeTimer struct {
	at      int64
	f       func()
	stopped bool
}

func (c *fakeQueueClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeQueueClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now + int64(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// advance moves the clock and runs the timers that came due.
func (c *fakeQueueClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now += int64(d)
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.stopped && t.at <= c.now {
			t.stopped = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// wakeLog records the wakes of named waiters, in order.
type wakeLog struct {
	mu  sync.Mutex
	got []string
}

func (l *wakeLog) waiter(name string) *QueueWaiter {
	return NewQueueWaiter(func(why QueueWake) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.got = append(l.got, name+":"+[]string{"retry", "expired", "dropped"}[why])
	})
}

func (l *wakeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

func sameWakes(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkDrained verifies that a test left no connection counted as held.
func checkDrained(t *testing.T) {
	t.Helper()
	if n := queuedTotal.Load(); n != 0 {
		t.Errorf("queued connections still counted: %d", n)
	}
	if qs := heldQueues(); len(qs) != 0 {
		t.Errorf("queues still listed as holding connections: %d", len(qs))
	}
}

func TestConnQueueSteps(t *testing.T) {
	type step struct {
		op    string // join, kick, served, requeue, leave, done, advance, trim, flush, close
		w     string
		depth int           // join's depth limit, trim's
		limit time.Duration // join's time limit, advance's step
		ok    bool          // join's, requeue's, leave's answer
		again QueueWake     // requeue's answer when not ok
		wakes []string
	}
	for _, c := range []struct {
		name  string
		steps []step
		want  ConnQueueStats
	}{
		{"first in, first out", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true}, {op: "join", w: "c", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "served", w: "a", wakes: []string{"b:retry"}},
			{op: "served", w: "b", wakes: []string{"c:retry"}},
			{op: "served", w: "c"},
		}, ConnQueueStats{Serviced: 3}},
		{"no room: back to the head, ahead of later ones", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "requeue", w: "a", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "served", w: "a", wakes: []string{"b:retry"}},
			{op: "served", w: "b"},
		}, ConnQueueStats{Serviced: 2}},
		{"depth limit refuses the one beyond it", []step{
			{op: "join", w: "a", depth: 2, ok: true}, {op: "join", w: "b", depth: 2, ok: true},
			{op: "join", w: "c", depth: 2, ok: false},
			{op: "leave", w: "a", ok: true}, {op: "leave", w: "b", ok: true},
		}, ConnQueueStats{Dropped: 1, Abandoned: 2}},
		{"time limit expires a listed connection", []step{
			{op: "join", w: "a", limit: 100 * time.Millisecond, ok: true},
			{op: "join", w: "b", ok: true},
			{op: "advance", limit: 60 * time.Millisecond},
			{op: "advance", limit: 50 * time.Millisecond, wakes: []string{"a:expired"}},
			{op: "kick", wakes: []string{"b:retry"}},
			{op: "served", w: "b"},
		}, ConnQueueStats{Expired: 1, Serviced: 1, AgeMax: 110, AgeEMA: 13, AgeEDM: 110}},
		{"time limit passes while it chooses", []step{
			{op: "join", w: "a", limit: 10 * time.Millisecond, ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "advance", limit: 20 * time.Millisecond},
			{op: "requeue", w: "a", ok: false, again: WakeExpired},
		}, ConnQueueStats{Expired: 1}},
		{"room made while it chooses: choose again", []step{
			{op: "join", w: "a", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "kick"},
			{op: "requeue", w: "a", ok: false, again: WakeRetry},
			{op: "requeue", w: "a", ok: true},
			{op: "leave", w: "a", ok: true},
		}, ConnQueueStats{Abandoned: 1}},
		{"a client gives up: the next is first", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true},
			{op: "leave", w: "a", ok: true},
			{op: "leave", w: "a", ok: false},
			{op: "kick", wakes: []string{"b:retry"}},
			{op: "served", w: "b"},
		}, ConnQueueStats{Abandoned: 1, Serviced: 1}},
		{"a woken client that gives up passes the room on", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "leave", w: "a", ok: true, wakes: []string{"b:retry"}},
			{op: "done", w: "b"},
		}, ConnQueueStats{Abandoned: 1, Dropped: 1}},
		{"a lowered depth limit drops from the end", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true}, {op: "join", w: "c", ok: true},
			{op: "trim", depth: 1, wakes: []string{"c:dropped", "b:dropped", "a:retry"}},
			{op: "served", w: "a"},
		}, ConnQueueStats{Dropped: 2, Serviced: 1}},
		{"queueing off: every one chooses once more", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true},
			{op: "flush", wakes: []string{"a:retry", "b:retry"}},
			{op: "served", w: "a"},
			{op: "done", w: "b"},
		}, ConnQueueStats{Serviced: 1, Dropped: 1}},
		{"pool deleted: all reset, none taken after", []step{
			{op: "join", w: "a", ok: true}, {op: "join", w: "b", ok: true},
			{op: "kick", wakes: []string{"a:retry"}},
			{op: "close", wakes: []string{"b:dropped"}},
			{op: "requeue", w: "a", ok: false, again: WakeDropped},
			{op: "join", w: "c", ok: false},
		}, ConnQueueStats{Dropped: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeQueueClock{}
			var q ConnQueue
			q.SetClock(clock)
			log := &wakeLog{}
			ws := map[string]*QueueWaiter{}
			w := func(name string) *QueueWaiter {
				if ws[name] == nil {
					ws[name] = log.waiter(name)
				}
				return ws[name]
			}
			for i, s := range c.steps {
				switch s.op {
				case "join":
					if got := q.Join(w(s.w), s.depth, s.limit); got != s.ok {
						t.Fatalf("step %d: join %s: %v, want %v", i, s.w, got, s.ok)
					}
				case "kick":
					q.Kick()
				case "served":
					q.Served(w(s.w))
				case "requeue":
					again, ok := q.Requeue(w(s.w))
					if ok != s.ok || (!ok && again != s.again) {
						t.Fatalf("step %d: requeue %s: %v %v, want %v %v", i, s.w, again, ok, s.again, s.ok)
					}
				case "leave":
					if got := q.Leave(w(s.w)); got != s.ok {
						t.Fatalf("step %d: leave %s: %v, want %v", i, s.w, got, s.ok)
					}
				case "done":
					q.Done(w(s.w))
				case "advance":
					clock.advance(s.limit)
				case "trim":
					q.Trim(s.depth)
				case "flush":
					q.Flush()
				case "close":
					q.Close()
				}
				if got := log.take(); !sameWakes(got, s.wakes) {
					t.Fatalf("step %d (%s %s): woke %v, want %v", i, s.op, s.w, got, s.wakes)
				}
			}
			if got := q.Stats(); got != c.want {
				t.Errorf("stats %+v, want %+v", got, c.want)
			}
			checkDrained(t)
		})
	}
}

func TestConnQueueAgesAndReset(t *testing.T) {
	clock := &fakeQueueClock{}
	var q ConnQueue
	q.SetClock(clock)
	log := &wakeLog{}
	a, b := log.waiter("a"), log.waiter("b")
	q.Join(a, 0, 0)
	clock.advance(40 * time.Millisecond)
	q.Join(b, 0, 0)
	clock.advance(10 * time.Millisecond)
	if s := q.Stats(); s.Depth != 2 || s.AgeHead != 50 || s.AgeMax != 50 {
		t.Fatalf("waiting: %+v, want depth 2, head and max age 50 ms", s)
	}
	q.Kick()
	q.Served(a) // waited 50 ms; wakes b
	q.Served(b) // waited 10 ms
	s := q.Stats()
	if s.Depth != 0 || s.AgeHead != 0 || s.AgeMax != 50 || s.Serviced != 2 || s.AgeEDM != 43 {
		t.Errorf("after service: %+v, want depth 0, max 50, decaying max 43, serviced 2", s)
	}
	q.ResetStats()
	if s := q.Stats(); s != (ConnQueueStats{}) {
		t.Errorf("after reset-stats: %+v, want zeros", s)
	}
	checkDrained(t)
}

// queuePool is a pool of members on one node, each with the connection
// limit given, queueing on connection limit as on says.
func queuePool(on bool, nodeLimit int, limits ...int) *Pool {
	p := &Pool{Name: "/Common/q"}
	n := &Node{Name: "/Common/n", Watch: NewWatch("node")}
	n.Cfg.Store(&config.Node{ConnectionLimit: nodeLimit})
	snap := &PoolSnap{Cfg: &config.Pool{QueueOnConnLimit: on}}
	for i, l := range limits {
		m := &Member{Pool: p, Name: "m", Node: n, Watch: NewWatch("member")}
		m.Cfg.Store(&config.Member{Addr: netip.AddrPortFrom(netip.MustParseAddr("127.72.0.1"), uint16(9000+i)), ConnectionLimit: l})
		snap.Members = append(snap.Members, m)
	}
	p.Snap.Store(snap)
	return p
}

func TestPoolQueueAt(t *testing.T) {
	for _, c := range []struct {
		name      string
		on        bool
		nodeLimit int
		limits    []int
		reserve   []int // connections taken on each member first
		down      []int // members marked down
		want      bool
	}{
		{"every member at its limit", true, 0, []int{1, 1}, []int{1, 1}, nil, true},
		{"one member has room", true, 0, []int{1, 1}, []int{1, 0}, nil, false},
		{"queueing off", false, 0, []int{1}, []int{1}, nil, false},
		{"a member without a limit", true, 0, []int{1, 0}, []int{1, 5}, nil, false},
		{"the node's limit", true, 2, []int{0, 0}, []int{1, 1}, nil, true},
		{"all down: no queue", true, 0, []int{1}, nil, []int{0}, false},
		{"the one up is at its limit", true, 0, []int{1, 1}, []int{1, 0}, []int{1}, true},
		{"no members", true, 0, nil, nil, nil, false},
	} {
		p := queuePool(c.on, c.nodeLimit, c.limits...)
		ms := p.Snap.Load().Members
		for i, n := range c.reserve {
			for k := 0; k < n; k++ {
				ms[i].Stats.TryOpen(0)
				ms[i].Node.Stats.TryOpen(0)
			}
		}
		for _, i := range c.down {
			ms[i].Watch.status.Store(int32(MonDown))
		}
		if got := p.QueueAt(nil); got != c.want {
			t.Errorf("%s: QueueAt %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReleaseWakesTheQueue checks the one wake of the data paths: a
// connection ending on a member wakes its pool's queue, and, for a node
// limit, the queue of another pool on the node.
func TestReleaseWakesTheQueue(t *testing.T) {
	p := queuePool(true, 0, 1)
	other := queuePool(true, 1, 0)
	m := p.Snap.Load().Members[0]
	if !m.Reserve() || m.Reserve() {
		t.Fatal("a member with connection limit 1 took other than one connection")
	}
	log := &wakeLog{}
	a := log.waiter("a")
	p.Queue.Join(a, 0, 0)
	m.Release()
	if got := log.take(); !sameWakes(got, []string{"a:retry"}) {
		t.Fatalf("release woke %v, want a", got)
	}
	if !m.Reserve() {
		t.Fatal("the woken connection found no room")
	}
	p.Queue.Served(a)

	// A node limit: a connection ending in one pool makes room in another.
	om := other.Snap.Load().Members[0]
	if !om.Reserve() {
		t.Fatal("no room on the node")
	}
	b := log.waiter("b")
	other.Queue.Join(b, 0, 0)
	shared := &Member{Pool: p, Node: om.Node, Watch: NewWatch("member")}
	shared.Cfg.Store(&config.Member{})
	shared.Release() // as if a connection of p's on the node ended
	if got := log.take(); !sameWakes(got, []string{"b:retry"}) {
		t.Fatalf("a release on the limited node woke %v, want b", got)
	}
	other.Queue.Done(b)
	m.Release()
	om.Stats.Close() // its node's count went with shared's release
	checkDrained(t)
}

// TestReleaseWithoutQueuesAllocatesNothing: with no connection waiting
// anywhere, taking and giving back a member's connection costs what it
// cost before queueing existed.
func TestReleaseWithoutQueuesAllocatesNothing(t *testing.T) {
	p := queuePool(false, 0, 0)
	m := p.Snap.Load().Members[0]
	if n := testing.AllocsPerRun(100, func() {
		m.Reserve()
		m.Release()
	}); n != 0 {
		t.Errorf("%v allocations per connection, want 0", n)
	}
}
