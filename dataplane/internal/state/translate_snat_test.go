package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestSNATSourceObjects: which source SNATSource gives with ltm snat
// objects configured: the most specific origin's translation on a
// virtual without its own, with the client's port unless source-port
// change; the virtual's own translation, a rule's decision and a pool's
// allow-snat no before it; no object, or no origin holding the client,
// the client's address.
func TestSNATSourceObjects(t *testing.T) {
	var reg snatobj.Registry
	tab, _, _ := reg.Build([]config.SNATObject{
		{Name: "net", Origins: []netip.Prefix{netip.MustParsePrefix("127.218.1.0/24")}, Addrs: []netip.Addr{netip.MustParseAddr("127.218.0.100")}},
		{Name: "host", Origins: []netip.Prefix{netip.MustParsePrefix("127.218.1.5/32")}, Addrs: []netip.Addr{netip.MustParseAddr("127.218.0.101")}, ChangePort: true},
		{Name: "auto", Origins: []netip.Prefix{netip.MustParsePrefix("127.218.2.0/24")}, Automap: true},
	}, nil, nil, nil)
	noSNAT := &Pool{}
	noSNAT.Snap.Store(&PoolSnap{Cfg: &config.Pool{NoSNAT: true}})
	local := netip.MustParseAddrPort("127.218.0.1:30000")
	dst := netip.MustParseAddrPort("127.218.0.11:30001")
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		name   string
		typ    config.SNATType
		tab    *snatobj.Table
		client string
		rule   *SNATChoice
		to     *Pool
		want   netip.AddrPort
	}{
		{name: "no objects", typ: config.SNATNone, client: "127.218.1.6:40000", want: ap("127.218.1.6:0")},
		{name: "translation address", typ: config.SNATNone, tab: tab, client: "127.218.1.6:40000", want: ap("127.218.0.100:40000")},
		{name: "type unset", typ: "", tab: tab, client: "127.218.1.6:40000", want: ap("127.218.0.100:40000")},
		{name: "most specific, port changed", typ: config.SNATNone, tab: tab, client: "127.218.1.5:40000", want: ap("127.218.0.101:0")},
		{name: "automap", typ: config.SNATNone, tab: tab, client: "127.218.2.9:40000", want: ap("127.218.0.1:40000")},
		{name: "not an origin", typ: config.SNATNone, tab: tab, client: "127.218.3.9:40000", want: ap("127.218.3.9:0")},
		{name: "virtual's automap first", typ: config.SNATAutomap, tab: tab, client: "127.218.1.6:40000", want: ap("127.218.0.1:40000")},
		{name: "rule's snat none first", typ: config.SNATNone, tab: tab, client: "127.218.1.6:40000", rule: &SNATChoice{Set: true, Type: config.SNATNone}, want: ap("127.218.1.6:0")},
		{name: "allow-snat no", typ: config.SNATNone, tab: tab, client: "127.218.1.6:40000", to: noSNAT, want: ap("127.218.1.6:0")},
	} {
		snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: tc.typ}}, SNATs: tc.tab}
		got := SNATSource(&Virtual{}, snap, ap(tc.client), local, dst, tc.rule, tc.to)
		if got != tc.want {
			t.Errorf("%s: source %v, want %v", tc.name, got, tc.want)
		}
	}
	snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATNone}}, SNATs: tab}
	before, _ := reg.SNATConns("net")
	SNATSourceUncounted(&Virtual{}, snap, ap("127.218.1.6:40000"), local, dst, nil)
	if n, _ := reg.SNATConns("net"); n != before {
		t.Errorf("an uncounted source counted: %d, was %d", n, before)
	}
	vs := &Virtual{}
	client := ap("127.218.1.6:40000")
	if n := testing.AllocsPerRun(100, func() { SNATSource(vs, snap, client, local, dst, nil, nil) }); n != 0 {
		t.Errorf("SNATSource with SNAT objects allocates %v times", n)
	}
}

// TestSNATSourceHeld: the held choice enforces ltm snat-translation
// connection limits for SNAT objects and a virtual's snatpool (ErrFull
// when all are full), says preserve-strict, holds only addresses with a
// limit or idle timeout, and SNATSource (a path that gives nothing back)
// neither holds nor refuses.
func TestSNATSourceHeld(t *testing.T) {
	ap := netip.MustParseAddrPort
	lim, free := netip.MustParseAddr("127.226.0.100"), netip.MustParseAddr("127.226.0.101")
	var reg snatobj.Registry
	tab, byPool, _ := reg.Build([]config.SNATObject{
		{Name: "lim", Origins: []netip.Prefix{netip.MustParsePrefix("127.226.1.0/24")}, Addrs: []netip.Addr{lim}, StrictPort: true},
		{Name: "free", Origins: []netip.Prefix{netip.MustParsePrefix("127.226.2.0/24")}, Addrs: []netip.Addr{free}},
	}, map[string][]netip.Addr{"/Common/sp": {lim}}, nil, map[netip.Addr]config.SNATTranslation{lim: {ConnLimit: 1}})
	local, dst := ap("127.226.0.1:30000"), ap("127.226.0.11:30001")
	snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATNone}}, SNATs: tab}
	vs := &Virtual{}
	h := SNATSourceHeld(vs, snap, ap("127.226.1.5:40000"), local, dst, nil, nil)
	if h.Src != ap("127.226.0.100:40000") || h.Hold == nil || !h.Strict || h.Err != nil {
		t.Fatalf("first: %+v", h)
	}
	if h2 := SNATSourceHeld(vs, snap, ap("127.226.1.6:40001"), local, dst, nil, nil); h2.Err != snatobj.ErrFull || h2.Src.IsValid() {
		t.Errorf("second at the limit: %+v, want ErrFull", h2)
	}
	if src := SNATSource(vs, snap, ap("127.226.1.6:40001"), local, dst, nil, nil); src != ap("127.226.0.100:40001") {
		t.Errorf("SNATSource at the limit: %v, want the address unheld", src)
	}
	pool := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATPool}}, SnatPool: []netip.Addr{lim}, SnatPoolStats: byPool["/Common/sp"]}
	if h2 := SNATSourceHeld(vs, pool, ap("127.226.3.6:40001"), local, dst, nil, nil); h2.Err != snatobj.ErrFull {
		t.Errorf("virtual's snatpool at the limit: %+v, want ErrFull", h2)
	}
	h.Hold.Release()
	if h2 := SNATSourceHeld(vs, pool, ap("127.226.3.6:40001"), local, dst, nil, nil); h2.Err != nil || h2.Hold == nil || h2.Strict {
		t.Errorf("virtual's snatpool after the release: %+v", h2)
	} else {
		h2.Hold.Release()
	}
	client := ap("127.226.2.6:40001")
	if h2 := SNATSourceHeld(vs, snap, client, local, dst, nil, nil); h2.Hold != nil || h2.Src != ap("127.226.0.101:40001") {
		t.Errorf("no limit: %+v, want unheld", h2)
	}
	if n := testing.AllocsPerRun(100, func() { SNATSourceHeld(vs, snap, client, local, dst, nil, nil) }); n != 0 {
		t.Errorf("SNATSourceHeld allocates %v times", n)
	}
}

// TestSNATSourceRuleHeld: a rule's snat address or snatpool decision,
// and automap (the rule's, the virtual's, an ltm snat's), count and hold
// the chosen address's ltm snat-translation limit as the virtual's own
// snatpool does: a full address passed over for the next of the rule's
// snatpool, ErrFull when none is left, shared with the virtual's
// snatpool's count; an address without a setting, or no Index, is
// given uncounted; no allocation.
func TestSNATSourceRuleHeld(t *testing.T) {
	ap := netip.MustParseAddrPort
	a1, a2, free := netip.MustParseAddr("127.242.0.1"), netip.MustParseAddr("127.242.0.2"), netip.MustParseAddr("127.242.0.3")
	self := netip.MustParseAddr("127.242.0.9")
	var reg snatobj.Registry
	tab, byPool, idx := reg.Build([]config.SNATObject{
		{Name: "auto", Origins: []netip.Prefix{netip.MustParsePrefix("127.242.2.0/24")}, Automap: true},
	}, map[string][]netip.Addr{"/Common/sp": {a1}}, nil,
		map[netip.Addr]config.SNATTranslation{a1: {ConnLimit: 1}, a2: {ConnLimit: 1}, self: {ConnLimit: 1}})
	local, dst := ap("127.242.0.10:30000"), ap("127.242.0.11:30001")
	client := ap("127.242.1.5:40000")
	vs := &Virtual{}
	snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATNone}}, SNATIndex: idx, SelfIPs: []netip.Addr{self}}
	pool := &SNATChoice{Set: true, Type: config.SNATPool, Addrs: []netip.Addr{a1, a2}}
	one := func(a netip.Addr) *SNATChoice {
		return &SNATChoice{Set: true, Type: config.SNATPool, Addrs: []netip.Addr{a}}
	}
	auto := &SNATChoice{Set: true, Type: config.SNATAutomap}
	var holds []*snatobj.Addr
	for i, st := range []struct {
		name string
		snap *VirtualSnap
		rule *SNATChoice
		want netip.Addr
		held bool
		full bool
	}{
		{name: "snat a1", snap: snap, rule: one(a1), want: a1, held: true},
		{name: "snat a1 full", snap: snap, rule: one(a1), full: true},
		{name: "snatpool: a1 full, a2", snap: snap, rule: pool, want: a2, held: true},
		{name: "snatpool: both full", snap: snap, rule: pool, full: true},
		{name: "snat without a setting", snap: snap, rule: one(free), want: free},
		{name: "no Index", snap: &VirtualSnap{Cfg: snap.Cfg}, rule: one(a1), want: a1},
		{name: "rule's automap", snap: snap, rule: auto, want: self, held: true},
		{name: "rule's automap full", snap: snap, rule: auto, full: true},
		{name: "virtual's automap full", snap: &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATAutomap}}, SNATIndex: idx, SelfIPs: snap.SelfIPs}, full: true},
		{name: "ltm snat automap full", snap: &VirtualSnap{Cfg: snap.Cfg, SNATs: tab, SNATIndex: idx, SelfIPs: snap.SelfIPs}, full: true},
	} {
		c := client
		if st.name == "ltm snat automap full" {
			c = ap("127.242.2.5:40000")
		}
		h := SNATSourceHeld(vs, st.snap, c, local, dst, st.rule, nil)
		holds = append(holds, h.Hold)
		switch {
		case st.full && (h.Err != snatobj.ErrFull || h.Src.IsValid() || h.Hold != nil):
			t.Fatalf("%d %s: %+v, want ErrFull", i, st.name, h)
		case !st.full && (h.Err != nil || h.Src != netip.AddrPortFrom(st.want, c.Port()) || (h.Hold != nil) != st.held):
			t.Fatalf("%d %s: %+v, want %v held %v", i, st.name, h, st.want, st.held)
		}
	}
	vpool := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATPool}}, SnatPool: []netip.Addr{a1}, SnatPoolStats: byPool["/Common/sp"], SNATIndex: idx}
	if h := SNATSourceHeld(vs, vpool, client, local, dst, nil, nil); h.Err != snatobj.ErrFull {
		t.Errorf("the virtual's snatpool while a rule holds a1: %+v, want ErrFull", h)
	}
	if src := SNATSource(vs, snap, client, local, dst, one(a1), nil); src != netip.AddrPortFrom(a1, client.Port()) {
		t.Errorf("SNATSource (nothing held) at the limit: %v, want a1", src)
	}
	if n, _ := reg.AddrConns(a1); n != 2 {
		t.Errorf("a1 total %d, want 2 (held, and SNATSource's)", n)
	}
	holds[0].Release()
	if h := SNATSourceHeld(vs, vpool, client, local, dst, nil, nil); h.Err != nil || h.Hold == nil {
		t.Errorf("the virtual's snatpool after the rule's connection ended: %+v", h)
	} else {
		h.Hold.Release()
	}
	r := one(free)
	if n := testing.AllocsPerRun(100, func() {
		SNATSourceHeld(vs, snap, client, local, dst, r, nil)
		if h := SNATSourceHeld(vs, snap, client, local, dst, pool, nil); h.Hold != nil {
			h.Hold.Release()
		}
	}); n != 0 {
		t.Errorf("a rule's held choice allocates %v times", n)
	}
}
