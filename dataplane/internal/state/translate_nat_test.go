package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/natobj"
)

// TestSNATSourceNAT: an ltm nat gives its originating address's server
// connections its translation address (the client's port kept); a
// virtual's own translation, a rule's snat and a pool's allow-nat no
// (not its allow-snat, which is the SNATs') come first (before the SNAT objects: daemon TestNATObjects); a member of the other family gets
// no NAT; the choice is counted (not when uncounted) and allocates
// nothing.
func TestSNATSourceNAT(t *testing.T) {
	var nreg natobj.Registry
	nats := nreg.Build([]config.NAT{{Name: "n1", Orig: netip.MustParseAddr("127.219.1.10"), Xlat: netip.MustParseAddr("127.219.0.10")}})
	noSNAT := &Pool{}
	noSNAT.Snap.Store(&PoolSnap{Cfg: &config.Pool{NoSNAT: true}})
	noNAT := &Pool{}
	noNAT.Snap.Store(&PoolSnap{Cfg: &config.Pool{NoNAT: true}})
	local := netip.MustParseAddrPort("127.219.0.1:30000")
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		name   string
		typ    config.SNATType
		nats   *natobj.Table
		client string
		dst    string
		rule   *SNATChoice
		to     *Pool
		want   netip.AddrPort
	}{
		{name: "no nat", typ: config.SNATNone, client: "127.219.1.10:40000", want: ap("127.219.1.10:0")},
		{name: "nat", typ: config.SNATNone, nats: nats, client: "127.219.1.10:40000", want: ap("127.219.0.10:40000")},
		{name: "type unset", typ: "", nats: nats, client: "127.219.1.10:40000", want: ap("127.219.0.10:40000")},
		{name: "not the originating address", typ: config.SNATNone, nats: nats, client: "127.219.1.11:40000", want: ap("127.219.1.11:0")},
		{name: "mapped client", typ: config.SNATNone, nats: nats, client: "[::ffff:127.219.1.10]:40000", want: ap("127.219.0.10:40000")},
		{name: "virtual's automap first", typ: config.SNATAutomap, nats: nats, client: "127.219.1.10:40000", want: ap("127.219.0.1:40000")},
		{name: "rule's snat none first", typ: config.SNATNone, nats: nats, client: "127.219.1.10:40000", rule: &SNATChoice{Set: true, Type: config.SNATNone}, want: ap("127.219.1.10:0")},
		{name: "allow-nat no", typ: config.SNATNone, nats: nats, client: "127.219.1.10:40000", to: noNAT, want: ap("127.219.1.10:0")},
		{name: "allow-snat no leaves the nat", typ: config.SNATNone, nats: nats, client: "127.219.1.10:40000", to: noSNAT, want: ap("127.219.0.10:40000")},
		{name: "allow-nat no leaves the virtual's automap", typ: config.SNATAutomap, nats: nats, client: "127.219.1.10:40000", to: noNAT, want: ap("127.219.0.1:40000")},
		{name: "other family", typ: config.SNATNone, nats: nats, client: "127.219.1.10:40000", dst: "[fd00:219::11]:30001", want: netip.AddrPort{}}, // nor has the client
	} {
		dst := ap("127.219.0.11:30001")
		if tc.dst != "" {
			dst = ap(tc.dst)
		}
		snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: tc.typ}}, NATs: tc.nats}
		got := SNATSource(&Virtual{}, snap, ap(tc.client), local, dst, tc.rule, tc.to)
		if got != tc.want {
			t.Errorf("%s: source %v, want %v", tc.name, got, tc.want)
		}
	}
	snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATNone}}, NATs: nats}
	client, dst := ap("127.219.1.10:40000"), ap("127.219.0.11:30001")
	before, _ := nreg.OutConns("n1")
	SNATSourceUncounted(&Virtual{}, snap, client, local, dst, nil)
	if n, _ := nreg.OutConns("n1"); n != before {
		t.Errorf("an uncounted source counted: %d, was %d", n, before)
	}
	SNATSource(&Virtual{}, snap, client, local, dst, nil, nil)
	if n, _ := nreg.OutConns("n1"); n != before+1 {
		t.Errorf("a source counted %d, was %d", n, before)
	}
	vs := &Virtual{}
	if n := testing.AllocsPerRun(100, func() { SNATSource(vs, snap, client, local, dst, nil, noNAT) }); n != 0 {
		t.Errorf("SNATSource toward an allow-nat no pool allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { SNATSource(vs, snap, client, local, dst, nil, nil) }); n != 0 {
		t.Errorf("SNATSource with a NAT allocates %v times", n)
	}
}

// TestSNATSourceNATPort: an ltm nat's translation takes the virtual's
// own source-port: preserve, the client's port (kept when free);
// change, any port; preserve-strict, the client's port exactly where
// the path holds the choice (Strict), not for an uncounted or unheld
// choice nor a client without a port; no allocation with either set.
func TestSNATSourceNATPort(t *testing.T) {
	var nreg natobj.Registry
	nats := nreg.Build([]config.NAT{{Name: "n1", Orig: netip.MustParseAddr("127.30.3.10"), Xlat: netip.MustParseAddr("127.30.3.100")}})
	ap := netip.MustParseAddrPort
	local, dst := ap("127.30.3.1:30000"), ap("127.30.3.2:30001")
	for _, tc := range []struct {
		name           string
		change, strict bool
		held           bool
		client         string
		want           netip.AddrPort
		wantStrict     bool
	}{
		{name: "preserve", held: true, client: "127.30.3.10:40000", want: ap("127.30.3.100:40000")},
		{name: "change", change: true, held: true, client: "127.30.3.10:40000", want: ap("127.30.3.100:0")},
		{name: "preserve-strict", strict: true, held: true, client: "127.30.3.10:40000", want: ap("127.30.3.100:40000"), wantStrict: true},
		{name: "preserve-strict, not held", strict: true, client: "127.30.3.10:40000", want: ap("127.30.3.100:40000")},
		{name: "preserve-strict, no client port", strict: true, held: true, client: "127.30.3.10:0", want: ap("127.30.3.100:0")},
		{name: "change, not the originating address", change: true, held: true, client: "127.30.3.11:40000", want: ap("127.30.3.11:0")},
	} {
		snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: config.SNAT{Type: config.SNATNone, ChangePort: tc.change, StrictPort: tc.strict}}, NATs: nats}
		var h SNATHeld
		if tc.held {
			h = SNATSourceHeld(&Virtual{}, snap, ap(tc.client), local, dst, nil, nil)
		} else {
			h.Src = SNATSource(&Virtual{}, snap, ap(tc.client), local, dst, nil, nil)
		}
		if h.Src != tc.want || h.Strict != tc.wantStrict {
			t.Errorf("%s: source %v strict %v, want %v strict %v", tc.name, h.Src, h.Strict, tc.want, tc.wantStrict)
		}
	}
	vs := &Virtual{}
	client := ap("127.30.3.10:40000")
	for _, sn := range []config.SNAT{{Type: config.SNATNone, ChangePort: true}, {Type: config.SNATNone, StrictPort: true}} {
		snap := &VirtualSnap{Cfg: &config.Virtual{SNAT: sn}, NATs: nats}
		if n := testing.AllocsPerRun(100, func() { SNATSourceHeld(vs, snap, client, local, dst, nil, nil) }); n != 0 {
			t.Errorf("%+v: SNATSourceHeld with a NAT allocates %v times", sn, n)
		}
	}
}
