package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// fixedClock makes the rate limits' clock read *sec until the test ends.
func fixedClock(t *testing.T, sec *uint32) {
	t.Helper()
	SetRateClock(func() uint32 { return *sec })
	t.Cleanup(func() { SetRateClock(nil) })
}

func TestRateWindow(t *testing.T) {
	type step struct {
		sec  uint32
		want bool
	}
	for _, c := range []struct {
		name  string
		limit uint32
		steps []step
	}{
		{"the limit, then refusals within the second", 2, []step{{5, true}, {5, true}, {5, false}, {5, false}}},
		{"a new second starts a new budget", 2, []step{{5, true}, {5, true}, {5, false}, {6, true}, {6, true}, {6, false}}},
		{"a burst across the turn gets twice the limit", 3, []step{{9, true}, {10, true}, {10, true}, {10, true}, {10, false}}},
		{"an idle gap forgets everything", 1, []step{{1, true}, {1, false}, {40, true}, {40, false}}},
		{"limit 1", 1, []step{{0, true}, {0, false}, {1, true}}},
		{"no budget at all", 0, []step{{3, false}, {4, false}}},
	} {
		var r Rate
		for i, s := range c.steps {
			if got := r.Take(s.sec, c.limit); got != s.want {
				t.Errorf("%s: step %d (second %d): took %v, want %v", c.name, i, s.sec, got, s.want)
			}
		}
	}
}

func TestRateGiveAndSpent(t *testing.T) {
	var r Rate
	r.Take(7, 2)
	r.Take(7, 2)
	if !r.Spent(7, 2) || r.Spent(8, 2) {
		t.Fatalf("spent at 7: %v, at 8: %v; want true, false", r.Spent(7, 2), r.Spent(8, 2))
	}
	r.Give(7)
	if r.Spent(7, 2) || !r.Take(7, 2) {
		t.Error("a connection given back is not available again")
	}
	r.Give(6) // a second that is over: nothing to give back
	if !r.Spent(7, 2) {
		t.Error("giving back to an old second changed the current one")
	}
}

func TestVirtualRateModes(t *testing.T) {
	a1, a2 := netip.MustParseAddr("10.1.1.1"), netip.MustParseAddr("10.1.1.2")
	b := netip.MustParseAddr("10.2.0.1")
	d1, d2 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	v6a, v6b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2")
	type conn struct {
		src, dst netip.Addr
		want     bool
	}
	for _, c := range []struct {
		mode  string
		src   int // rate-limit-src-mask
		dst   int // rate-limit-dst-mask
		conns []conn
	}{
		{"object", 0, 0, []conn{{a1, d1, true}, {b, d2, true}, {a2, d1, false}}},
		{"object-source", 0, 0, []conn{{a1, d1, true}, {a1, d2, true}, {a1, d1, false}, {b, d1, true}, {a2, d1, true}}},
		{"object-source", 24, 0, []conn{{a1, d1, true}, {a2, d1, true}, {a1, d1, false}, {b, d1, true}}},
		{"object-source", 24, 0, []conn{{v6a, d1, true}, {v6b, d1, true}, {v6a, d1, false}}}, // /24 of an IPv6 address
		{"object-destination", 0, 0, []conn{{a1, d1, true}, {b, d1, true}, {a2, d1, false}, {a1, d2, true}}},
		{"object-destination", 0, 16, []conn{{a1, d1, true}, {b, d2, true}, {a2, d1, false}}},
		{"object-source-destination", 0, 0, []conn{{a1, d1, true}, {a1, d1, true}, {a1, d1, false}, {a1, d2, true}, {b, d1, true}}},
		{"source", 0, 0, []conn{{a1, d1, true}, {a1, d2, true}, {a1, d1, false}, {b, d1, true}}},
		{"destination", 8, 8, []conn{{a1, d1, true}, {b, d2, true}, {a1, d1, false}}},
		{"source-destination", 0, 0, []conn{{a1, d1, true}, {a1, d1, true}, {a1, d1, false}, {a2, d1, true}}},
	} {
		m, ok := config.ParseRateLimitMode(c.mode)
		if !ok {
			t.Fatalf("%s: not a mode", c.mode)
		}
		m.SrcMask, m.DstMask = c.src, c.dst
		vs, shared := &Virtual{}, new(RateTable)
		r := vs.RateFor(&config.Virtual{RateLimit: 2, RateLimitMode: m}, shared)
		if (r.Table == shared) != (m.Keyed() && !m.Object) {
			t.Errorf("%s: shared table %v", c.mode, r.Table == shared)
		}
		for i, cn := range c.conns {
			if got := r.take(&vs.Rate, cn.src, cn.dst, 3); got != cn.want {
				t.Errorf("%s /%d /%d: connection %d %s -> %s: admitted %v, want %v", c.mode, c.src, c.dst, i, cn.src, cn.dst, got, cn.want)
			}
		}
	}
}

func TestVirtualRateKeepsBudgets(t *testing.T) {
	vs, shared := &Virtual{}, new(RateTable)
	cfg := &config.Virtual{RateLimit: 1, RateLimitMode: config.RateLimitMode{Object: true, BySource: true}}
	vs.Snap.Store(&VirtualSnap{Cfg: cfg, Rate: vs.RateFor(cfg, shared)})
	again := vs.RateFor(&config.Virtual{RateLimit: 5, RateLimitMode: cfg.RateLimitMode}, shared)
	if again.Table != vs.Snap.Load().Rate.Table || again.Limit != 5 {
		t.Error("a commit that keeps the mode lost the budgets")
	}
	other := vs.RateFor(&config.Virtual{RateLimit: 5, RateLimitMode: config.RateLimitMode{Object: true, BySource: true, SrcMask: 16}}, shared)
	if other.Table == vs.Snap.Load().Rate.Table {
		t.Error("budgets kept across a change of mask")
	}
	if vs.RateFor(&config.Virtual{}, shared) != nil {
		t.Error("no rate-limit, yet a limiter")
	}
}

func TestRateTableBound(t *testing.T) {
	var tab RateTable
	key := func(i int) rateKey {
		return rateKey{src: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).As16(), shape: 1}
	}
	const many = 3 * RateKeys
	overflowed := 0
	for i := range many {
		k := key(i)
		if !tab.take(&k, 1, 1) {
			overflowed++ // its set was full: the shared overflow budget (1) is spent
		}
	}
	if n := tab.live(1); n > RateKeys {
		t.Fatalf("%d live budgets, more than the bound %d", n, RateKeys)
	}
	if overflowed == 0 {
		t.Error("three times the bound of addresses in one second, and none went to the overflow budget")
	}
	// The next second every slot is free again: addresses start afresh,
	// in the slots of the second before, and the table does not grow.
	admitted := 0
	for i := range many {
		k := key(i)
		if tab.take(&k, 2, 1) {
			admitted++
		}
	}
	if n := tab.live(2); n > RateKeys {
		t.Fatalf("%d live budgets in the new second, more than the bound %d", n, RateKeys)
	}
	if admitted != many-overflowed {
		t.Errorf("the new second admitted %d, want %d as in the first", admitted, many-overflowed)
	}
	// A known address keeps its own budget within its second.
	k := key(0)
	if tab.take(&k, 2, 1) {
		t.Error("an address over its budget was admitted")
	}
}

// membersOnNode makes a round-robin pool of two members on one node.
func membersOnNode(memberRate, nodeRate int) (*Pool, *Member, *Member) {
	p := &Pool{Name: "/Common/p"}
	n := &Node{Name: "/Common/n", Watch: NewWatch("node")}
	n.Cfg.Store(&config.Node{RateLimit: nodeRate})
	mk := func(addr string, rate int) *Member {
		m := &Member{Key: addr, Pool: p, Name: addr, Node: n, Watch: NewWatch("member")}
		m.Cfg.Store(&config.Member{Addr: netip.MustParseAddrPort(addr), RateLimit: rate})
		return m
	}
	a, b := mk("10.0.0.1:80", memberRate), mk("10.0.0.2:80", 0)
	p.Snap.Store(&PoolSnap{Cfg: &config.Pool{Name: p.Name}, Members: []*Member{a, b}})
	return p, a, b
}

func TestChooseRateLimits(t *testing.T) {
	sec := uint32(100)
	fixedClock(t, &sec)
	for _, how := range []Chooser{{}, {Reserve: true}, {Reserve: true, Override: true}} {
		p, a, b := membersOnNode(1, 0)
		var got []*Member
		for range 4 {
			m, _, _ := Choose(p, Target{}, nil, nil, how)
			got = append(got, m)
		}
		if got[0] != a || got[1] != b || got[2] != b || got[3] != b {
			t.Errorf("reserve %v: chose %v, want a then b thrice", how.Reserve, got)
		}
		if mr, nr := a.RateLimited(); !mr || nr || !a.AtLimit() || a.AtConnectionLimit() {
			t.Errorf("member over its rate: limited %v/%v, at limit %v", mr, nr, a.AtLimit())
		}
		// Named and persisted clients are refused too (override lifts
		// connection limits only).
		if m, _, _ := Choose(p, Target{Addr: a.Cfg.Load().Addr, Accept: AvailDisabled}, nil, nil, how); m != nil {
			t.Errorf("reserve %v: a named member over its rate was taken", how.Reserve)
		}
		if m, _, by := Choose(p, Target{}, func() (*Pool, *Member) { return p, a }, nil, how); m != b || by != ByBalancing {
			t.Errorf("reserve %v: persisted member over its rate: %v by %d", how.Reserve, m, by)
		}
		sec++
		if m, _, _ := Choose(p, Target{Addr: a.Cfg.Load().Addr, Accept: AvailDisabled}, nil, nil, how); m != a {
			t.Errorf("reserve %v: the next second the member is not taken again", how.Reserve)
		}
	}
	// The node's limit counts its members together.
	p, a, b := membersOnNode(0, 2)
	for i := range 2 {
		if m, _, _ := Choose(p, Target{}, nil, nil, Chooser{Reserve: true}); m == nil {
			t.Fatalf("connection %d within the node's rate refused", i)
		}
	}
	if m, _, _ := Choose(p, Target{}, nil, nil, Chooser{Reserve: true}); m != nil {
		t.Errorf("node over its rate, yet %s chosen", m.Name)
	}
	if _, nr := a.RateLimited(); !nr || !a.Node.RateLimited() || !b.AtLimit() {
		t.Error("node over its rate not reported")
	}
	if a.Stats.Cur.Load()+b.Stats.Cur.Load() != 2 || a.Node.Stats.Cur.Load() != 2 {
		t.Errorf("counted %d+%d on the members, %d on the node; want 2", a.Stats.Cur.Load(), b.Stats.Cur.Load(), a.Node.Stats.Cur.Load())
	}
}

// A connection refused by the connection limit does not spend the rate.
func TestChooseRateGivenBack(t *testing.T) {
	sec := uint32(1)
	fixedClock(t, &sec)
	p, a, _ := membersOnNode(5, 0)
	c := *a.Cfg.Load()
	c.ConnectionLimit = 1
	a.Cfg.Store(&c)
	a.Stats.Cur.Store(1) // at its connection limit already
	named := Target{Addr: c.Addr, Accept: AvailDisabled}
	if m, _, _ := Choose(p, named, nil, nil, Chooser{Reserve: true}); m != nil {
		t.Fatal("member at its connection limit taken")
	}
	if _, n := unpack(a.Rate.w.Load()); n != 0 {
		t.Errorf("refused connection spent %d of the rate", n)
	}
}

func TestAdmitRateLimit(t *testing.T) {
	sec := uint32(50)
	fixedClock(t, &sec)
	cfg := &config.Virtual{Enabled: true, RateLimit: 2, RateLimitMode: config.RateLimitMode{Object: true, BySource: true}}
	vs := &Virtual{}
	snap := &VirtualSnap{Cfg: cfg}
	snap.Rate = vs.RateFor(cfg, new(RateTable))
	vs.Snap.Store(snap)
	local := netip.MustParseAddrPort("127.0.0.1:80")
	a, b := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("10.0.0.2:1000")
	for i, c := range []struct {
		client netip.AddrPort
		want   bool
	}{{a, true}, {a, true}, {a, false}, {b, true}, {a, false}, {b, true}, {b, false}} {
		if got := vs.Admit(snap, c.client, local); got != c.want {
			t.Errorf("connection %d from %s: admitted %v, want %v", i, c.client, got, c.want)
		}
	}
	if got := vs.RateDropped.Load(); got != 3 {
		t.Errorf("counted %d refusals, want 3", got)
	}
	if got := vs.Stats.Tot.Load(); got != 4 {
		t.Errorf("counted %d connections, want 4", got)
	}
	if vs.RateLimited(snap) {
		t.Error("a keyed mode reported the whole virtual limited")
	}
	sec++
	if !vs.Admit(snap, a, local) {
		t.Error("the next second the source is still refused")
	}
}

// The limits cost no allocation per connection, configured or not.
func TestRateLimitsAllocate(t *testing.T) {
	sec := uint32(1)
	fixedClock(t, &sec)
	for _, m := range []config.RateLimitMode{{}, {Object: true, BySource: true, SrcMask: 24}, {ByDest: true}} {
		cfg := &config.Virtual{Enabled: true, RateLimit: 1 << 30, RateLimitMode: m}
		vs := &Virtual{}
		snap := &VirtualSnap{Cfg: cfg}
		snap.Rate = vs.RateFor(cfg, new(RateTable))
		client, local := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("127.0.0.1:80")
		vs.Admit(snap, client, local) // the shard's slots, once
		if n := testing.AllocsPerRun(100, func() { vs.Admit(snap, client, local) }); n != 0 {
			t.Errorf("mode %+v: %.1f allocations per connection", m, n)
		}
	}
	p, _, _ := membersOnNode(1<<30, 1<<30)
	if n := testing.AllocsPerRun(100, func() {
		m, _, _ := Choose(p, Target{}, nil, nil, Chooser{Reserve: true})
		m.Release()
	}); n != 0 {
		t.Errorf("%.1f allocations per member choice", n)
	}
}
