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
	}, nil, nil)
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
