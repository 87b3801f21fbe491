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
	tab, _ := reg.Build([]config.SNATObject{
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
	tab, byPool := reg.Build([]config.SNATObject{
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
