package dataplane

import (
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// These tests stop the rate limits' clock, so that a burst is within one
// second however slowly the machine runs, and move it on by hand; they do
// not run in parallel with each other (the clock is the process's).

func frozenRateClock(t *testing.T) *atomic.Uint32 {
	t.Helper()
	sec := new(atomic.Uint32)
	sec.Store(1000)
	state.SetRateClock(sec.Load)
	t.Cleanup(func() { state.SetRateClock(nil) })
	return sec
}

// TestVirtualRateLimitPerSource: in mode object-source a source's burst
// beyond rate-limit is reset while another source is still served; in
// mode object the virtual's whole budget is spent, and shown so; the next
// second admits again.
func TestVirtualRateLimitPerSource(t *testing.T) {
	sec := frozenRateClock(t)
	startServer(t, "127.0.240.2:9000", "S1")
	p, _ := newPlane(t)
	vs := "127.0.240.1:8000"
	cfg := basic(vs, "127.0.240.2:9000")
	v := cfg.Virtuals["/Common/vs"]
	v.RateLimit = 3
	v.RateLimitMode, _ = ParseRateLimitMode("object-source")
	mustApply(t, p, cfg)

	burst := func(src string, n int) (ok int) {
		for range n {
			if tryAsk(src, vs) == nil {
				ok++
			}
		}
		return ok
	}
	if ok := burst("127.0.240.21", 5); ok != 3 {
		t.Fatalf("source A: %d of a burst of 5 served, want 3 (rate-limit 3)", ok)
	}
	if ok := burst("127.0.240.22", 2); ok != 2 {
		t.Fatalf("source B after A's burst: %d of 2 served", ok)
	}
	st, _ := p.Virtual("/Common/vs")
	if st.RateLimited != 2 || st.ClientSide.TotConns != 5 || st.RateLimit != 3 {
		t.Fatalf("counters: %d rate-limited, %d connections; want 2 and 5", st.RateLimited, st.ClientSide.TotConns)
	}
	if st.Status.Reason == reasonVSRate {
		t.Fatal("one source over its rate made the whole virtual unavailable")
	}

	// Mode object: one budget for every source.
	v.RateLimitMode, _ = ParseRateLimitMode("object")
	v.RateLimit = 2
	mustApply(t, p, cfg)
	if a, b := burst("127.0.240.23", 1), burst("127.0.240.24", 2); a+b != 2 {
		t.Fatalf("mode object: %d of 3 served, want 2", a+b)
	}
	st, _ = p.Virtual("/Common/vs")
	if st.Status.Availability != Unavailable || st.Status.Reason != reasonVSRate || st.RateLimited != 3 {
		t.Fatalf("spent virtual: %+v, %d rate-limited", st.Status, st.RateLimited)
	}
	sec.Add(1)
	if burst("127.0.240.23", 1) != 1 {
		t.Fatal("the next second the virtual still refuses")
	}
	p.ResetStats(StatsVirtual, "/Common/vs")
	if st, _ = p.Virtual("/Common/vs"); st.RateLimited != 0 {
		t.Fatalf("reset-stats kept %d", st.RateLimited)
	}
}

// TestMemberRateLimitSkipped: a member over its rate-limit (or on a node
// over its own) is passed over for another member within the same second,
// on an L4 virtual and, request by request, on a message-based one.
func TestMemberRateLimitSkipped(t *testing.T) {
	sec := frozenRateClock(t)
	startServer(t, "127.0.240.32:9000", "S1")
	startServer(t, "127.0.240.33:9000", "S2")
	p, _ := newPlane(t)

	count := func(answers []string) (s1 int) {
		for _, a := range answers {
			if a == "S1 Response" {
				s1++
			}
		}
		return s1
	}
	l4 := "127.0.240.31:8000"
	cfg := basic(l4, "127.0.240.32:9000", "127.0.240.33:9000")
	cfg.Pools["/Common/pool"].Members[0].RateLimit = 1
	mustApply(t, p, cfg)
	var got []string
	for range 4 {
		got = append(got, once(t, l4))
	}
	if count(got) != 1 {
		t.Fatalf("L4: S1 (rate-limit 1) answered %d of %v within one second", count(got), got)
	}
	m := memberStat(t, p, "/Common/pool", "/Common/127.0.240.32:9000")
	if m.Status.Availability != Unavailable || m.Status.Reason != reasonMemberRate {
		t.Fatalf("member over its rate: %+v", m.Status)
	}
	if ps, _ := p.Pool("/Common/pool"); ps.CurActiveMembers != 1 {
		t.Fatalf("%d active members, want 1", ps.CurActiveMembers)
	}
	sec.Add(1)
	if m = memberStat(t, p, "/Common/pool", "/Common/127.0.240.32:9000"); m.Status.Reason == reasonMemberRate {
		t.Fatal("the next second the member is still over its rate")
	}

	// The node's rate-limit, on a message-based virtual: each message is
	// a new choice.
	mb := "127.0.240.41:9000"
	cfg = mblbConfig(mb, &MBLB{}, "127.0.240.32:9000", "127.0.240.33:9000")
	a := netip.MustParseAddr("127.0.240.32")
	cfg.Nodes = map[string]*Node{"/Common/127.0.240.32": {Name: "/Common/127.0.240.32", Addr: a, RateLimit: 2}}
	mustApply(t, p, cfg)
	c := dialVS(t, mb)
	got = got[:0]
	for range 6 {
		got = append(got, c.mustAsk("hello"))
	}
	if count(got) != 2 {
		t.Fatalf("message-based: S1 (node rate-limit 2) answered %d of %v within one second", count(got), got)
	}
	n, ok := p.Node("/Common/127.0.240.32")
	if !ok || n.Status.Reason != reasonNodeRate {
		t.Fatalf("node over its rate: %+v", n.Status)
	}
}
