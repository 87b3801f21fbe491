package dataplane

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The connection queue on the wire: a member with connection-limit 1, a
// first client holding it, and the clients after it waiting in the
// pool's queue; both L4 engines (a plain virtual on the event loops, and
// one whose rule handles LB_QUEUED on goroutines).

// queueCase is one engine the queue tests run on.
type queueCase struct {
	name string
	rule bool // a rule handling LB_QUEUED: goroutines, and its log
}

var queueCases = []queueCase{{"event loop", false}, {"goroutines with LB_QUEUED", true}}

// queuePlane starts a member at member and a virtual at vs over a pool
// with queueing on; the member takes one connection at a time.
func queuePlane(t *testing.T, c queueCase, vs, member string, depth int, limit time.Duration) (*Plane, *Config, *ruleLog) {
	t.Helper()
	startServer(t, member, "S1")
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	pool := cfg.Pools["/Common/pool"]
	pool.Members[0].ConnectionLimit = 1
	pool.QueueOnConnLimit, pool.QueueDepthLimit, pool.QueueTimeLimit = true, depth, limit
	var lg *ruleLog
	if c.rule {
		var r Rules
		r, lg = compileRules(t, `when LB_QUEUED { log local0. "queued [IP::client_addr]" }`)
		cfg.Virtuals["/Common/vs"].Rules = r
	}
	mustApply(t, p, cfg)
	return p, cfg, lg
}

// queueDepth waits until n connections wait in the pool's queue.
func queueDepth(t *testing.T, p *Plane, n uint64) {
	t.Helper()
	eventually(t, "queue depth", func() bool {
		ps, _ := p.Pool("/Common/pool")
		return ps.ConnQueue.Depth == n
	})
}

func queueStats(p *Plane) ConnQueueStats {
	ps, _ := p.Pool("/Common/pool")
	return ps.ConnQueue
}

// send writes one line without waiting for the answer.
func (c *client) send(msg string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(msg + "\n")); err != nil {
		c.t.Fatalf("send %q: %v", msg, err)
	}
}

// answer reads one answer line within 5 s.
func (c *client) answer() (string, error) {
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := c.r.ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestConnQueueServedInTurn: the second client waits while the first
// holds the member, then is served once the first closes; LB_QUEUED runs
// for it; show and reset-stats.
func TestConnQueueServedInTurn(t *testing.T) {
	for i, c := range queueCases {
		t.Run(c.name, func(t *testing.T) {
			vs, member := "127.72.1.1:8000", "127.72.1.2:9000"
			if i == 1 {
				vs, member = "127.72.1.11:8000", "127.72.1.12:9000"
			}
			p, _, lg := queuePlane(t, c, vs, member, 0, 0)
			first := dialVS(t, vs)
			if got := first.mustAsk("one"); got != "S1 Response" {
				t.Fatalf("first client: %q", got)
			}
			second := dialVS(t, vs)
			second.send("two")
			queueDepth(t, p, 1)
			third := dialVS(t, vs)
			queueDepth(t, p, 2)
			first.c.Close()
			if got, err := second.answer(); got != "S1 Response" {
				t.Fatalf("second client after the first closed: %q, %v", got, err)
			}
			queueDepth(t, p, 1)
			second.c.Close()
			if got, err := third.ask("three"); got != "S1 Response" {
				t.Fatalf("third client: %q, %v", got, err)
			}
			s := queueStats(p)
			if s.Depth != 0 || s.Serviced != 2 || s.Dropped+s.Expired+s.Abandoned != 0 {
				t.Fatalf("stats %+v, want 2 serviced", s)
			}
			if lg != nil {
				if n := strings.Count(lg.String(), "queued 127.0.0.1"); n != 2 {
					t.Fatalf("LB_QUEUED logged %d times, want 2:\n%s", n, lg)
				}
			}
			p.ResetStats(StatsPool, "/Common/pool")
			if s := queueStats(p); s != (ConnQueueStats{}) {
				t.Fatalf("after reset-stats: %+v", s)
			}
		})
	}
}

// TestConnQueueLimits: beyond queue-depth-limit a client is reset at
// once; past queue-time-limit a waiting client is reset; a client that
// closes while it waits leaves the queue, and the room goes to the next.
func TestConnQueueLimits(t *testing.T) {
	for i, c := range queueCases {
		base := 20 + 10*i
		addr := func(host, port int) string {
			return "127.72." + strconv.Itoa(base+host) + "." + strconv.Itoa(host) + ":" + strconv.Itoa(port)
		}
		t.Run(c.name+"/depth", func(t *testing.T) {
			vs, member := addr(1, 8000), addr(2, 9000)
			p, _, _ := queuePlane(t, c, vs, member, 1, 0)
			first := dialVS(t, vs)
			first.mustAsk("one")
			second := dialVS(t, vs)
			second.send("two")
			queueDepth(t, p, 1)
			if tryAsk("", vs) == nil {
				t.Fatal("a client beyond the depth limit was answered")
			}
			if s := queueStats(p); s.Dropped != 1 || s.Depth != 1 {
				t.Fatalf("stats %+v, want 1 dropped, 1 waiting", s)
			}
			first.c.Close()
			if got, err := second.answer(); got != "S1 Response" {
				t.Fatalf("the waiting client: %q, %v", got, err)
			}
		})
		t.Run(c.name+"/time", func(t *testing.T) {
			vs, member := addr(3, 8000), addr(4, 9000)
			p, _, _ := queuePlane(t, c, vs, member, 0, 50*time.Millisecond)
			first := dialVS(t, vs)
			first.mustAsk("one")
			if tryAsk("", vs) == nil {
				t.Fatal("a client past the time limit was answered")
			}
			eventually(t, "the expiry counted", func() bool { return queueStats(p).Expired == 1 })
			if s := queueStats(p); s.Depth != 0 || s.Serviced != 0 {
				t.Fatalf("stats %+v, want none waiting or served", s)
			}
			first.mustAsk("still there")
		})
		t.Run(c.name+"/half-closed request waits on", func(t *testing.T) {
			vs, member := addr(7, 8000), addr(8, 9000)
			p, _, _ := queuePlane(t, c, vs, member, 0, 0)
			first := dialVS(t, vs)
			first.mustAsk("one")
			second := dialVS(t, vs)
			second.send("two")
			second.c.CloseWrite() // as `echo two | nc` does: the answer is still wanted
			queueDepth(t, p, 1)
			first.c.Close()
			if got, err := second.answer(); got != "S1 Response" {
				t.Fatalf("half-closed client: %q, %v", got, err)
			}
			if s := queueStats(p); s.Abandoned != 0 || s.Serviced != 1 {
				t.Fatalf("stats %+v, want 1 serviced, none abandoned", s)
			}
		})
		t.Run(c.name+"/gives up", func(t *testing.T) {
			vs, member := addr(5, 8000), addr(6, 9000)
			p, _, _ := queuePlane(t, c, vs, member, 0, 0)
			first := dialVS(t, vs)
			first.mustAsk("one")
			quitter := dialVS(t, vs)
			queueDepth(t, p, 1)
			quitter.c.Close()
			eventually(t, "the client that gave up counted", func() bool { return queueStats(p).Abandoned == 1 })
			queueDepth(t, p, 0)
			first.c.Close()
			if got, err := dialVS(t, vs).ask("next"); got != "S1 Response" {
				t.Fatalf("next client: %q, %v", got, err)
			}
		})
	}
}

// TestConnQueueCommits: a commit that raises the member's limit serves
// the waiting client; one that turns queueing off resets it (no room);
// one that moves the virtual to another pool and deletes the old one
// resets it.
func TestConnQueueCommits(t *testing.T) {
	for i, c := range queueCases {
		base := 40 + 10*i
		addr := func(host, port int) string {
			return "127.72." + strconv.Itoa(base+host) + "." + strconv.Itoa(host) + ":" + strconv.Itoa(port)
		}
		t.Run(c.name+"/limit raised", func(t *testing.T) {
			vs, member := addr(1, 8000), addr(2, 9000)
			p, cfg, _ := queuePlane(t, c, vs, member, 0, 0)
			dialVS(t, vs).mustAsk("one")
			second := dialVS(t, vs)
			second.send("two")
			queueDepth(t, p, 1)
			cfg.Pools["/Common/pool"].Members[0].ConnectionLimit = 2
			mustApply(t, p, cfg)
			if got, err := second.answer(); got != "S1 Response" {
				t.Fatalf("waiting client after the limit was raised: %q, %v", got, err)
			}
		})
		t.Run(c.name+"/queueing off", func(t *testing.T) {
			vs, member := addr(3, 8000), addr(4, 9000)
			p, cfg, _ := queuePlane(t, c, vs, member, 0, 0)
			dialVS(t, vs).mustAsk("one")
			second := dialVS(t, vs)
			second.send("two")
			queueDepth(t, p, 1)
			cfg.Pools["/Common/pool"].QueueOnConnLimit = false
			mustApply(t, p, cfg)
			if got, err := second.answer(); err == nil {
				t.Fatalf("waiting client after queueing was turned off: answered %q", got)
			}
			if s := queueStats(p); s.Depth != 0 || s.Dropped != 1 {
				t.Fatalf("stats %+v, want 1 dropped", s)
			}
		})
		t.Run(c.name+"/pool deleted", func(t *testing.T) {
			vs, member, other := addr(5, 8000), addr(6, 9000), addr(7, 9000)
			startServer(t, other, "S2")
			p, cfg, _ := queuePlane(t, c, vs, member, 0, 0)
			dialVS(t, vs).mustAsk("one")
			second := dialVS(t, vs)
			second.send("two")
			queueDepth(t, p, 1)
			withPool(cfg, "/Common/other", other)
			cfg.Virtuals["/Common/vs"].Pool = "/Common/other"
			delete(cfg.Pools, "/Common/pool")
			mustApply(t, p, cfg)
			if got, err := second.answer(); err == nil {
				t.Fatalf("waiting client of a deleted pool: answered %q", got)
			}
			if got := once(t, vs); got != "S2 Response" {
				t.Fatalf("a new client after the change: %q", got)
			}
		})
	}
}
