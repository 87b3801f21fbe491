package state

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestAutomapResolved: automap's translation resolved at commit
// (AutomapOf) gives the same address, counts and limits as the Index's
// lookup: the self IP of the family, else the virtual's address for a
// client that reached it; a client that reached another address (a
// network virtual's), or a family without a resolved address, is
// looked up; a virtual with several addresses is not resolved; no
// Index, nothing resolved; no allocation.
func TestAutomapResolved(t *testing.T) {
	ap, ip := netip.MustParseAddrPort, netip.MustParseAddr
	self4, self6 := ip("127.247.0.9"), ip("fd00:247::9")
	vaddr, other := ip("127.247.0.10"), ip("127.247.0.20")
	var reg snatobj.Registry
	_, _, idx := reg.Build(nil, nil, []netip.Addr{self4, vaddr, other}, map[netip.Addr]config.SNATTranslation{vaddr: {ConnLimit: 1}})
	host := &config.Virtual{SNAT: config.SNAT{Type: config.SNATAutomap}, Destination: netip.AddrPortFrom(vaddr, 30000)}
	network := &config.Virtual{SNAT: host.SNAT, Destination: host.Destination, Network: netip.MustParsePrefix("127.247.0.0/24")}
	list := &config.Virtual{SNAT: host.SNAT, Destination: host.Destination, Addresses: []netip.Addr{vaddr, other}}
	for _, c := range []struct {
		name       string
		vc         *config.Virtual
		self       []netip.Addr
		idx        *snatobj.Index
		want4      netip.Addr
		self4, x4  bool
		want6      netip.Addr
		self6b, x6 bool
	}{
		{name: "self IPs", vc: host, self: []netip.Addr{self4, self6}, idx: idx, want4: self4, self4: true, x4: true, want6: self6, self6b: true},
		{name: "virtual's address", vc: host, idx: idx, want4: vaddr, x4: true},
		{name: "network virtual", vc: network, idx: idx},
		{name: "address list", vc: list, idx: idx},
		{name: "no Index", vc: host, self: []netip.Addr{self4}},
	} {
		r := AutomapOf(c.vc, c.self, c.idx)
		if r[0].Addr != c.want4 || r[0].Self != c.self4 || (r[0].Xlat != nil) != c.x4 ||
			r[1].Addr != c.want6 || r[1].Self != c.self6b || (r[1].Xlat != nil) != c.x6 {
			t.Errorf("%s: %+v", c.name, r)
		}
	}

	// The choice: the resolved virtual's address holds its limit of 1.
	vs := &Virtual{}
	snap := &VirtualSnap{Cfg: host, SNATIndex: idx}
	snap.Automap = AutomapOf(host, nil, idx)
	client, dst := ap("127.247.2.5:40000"), ap("127.247.0.11:30001")
	h := SNATSourceHeld(vs, snap, client, host.Destination, dst, nil, nil)
	if h.Err != nil || h.Src != netip.AddrPortFrom(vaddr, client.Port()) || h.Hold == nil {
		t.Fatalf("first choice: %+v, want the virtual's address held", h)
	}
	if h2 := SNATSourceHeld(vs, snap, client, host.Destination, dst, nil, nil); h2.Err != snatobj.ErrFull {
		t.Errorf("second choice at the limit: %+v, want ErrFull", h2)
	}
	// A client that reached another address: looked up (counted
	// under other's translation, not held: no setting).
	if h3 := SNATSourceHeld(vs, snap, client, netip.AddrPortFrom(other, 30000), dst, nil, nil); h3.Err != nil || h3.Src.Addr() != other || h3.Hold != nil {
		t.Errorf("another local address: %+v, want %v", h3, other)
	}
	h.Hold.Release()
	if n, _ := reg.AddrConns(vaddr); n != 1 {
		t.Errorf("virtual address's connections %d, want 1", n)
	}
	if n, _ := reg.AddrConns(other); n != 1 {
		t.Errorf("other's connections %d, want 1 (looked up)", n)
	}
	// The self IP resolved: counted, uncounted for an address without
	// a translation (IPv6's self IP has none), a rule's automap alike.
	snap = &VirtualSnap{Cfg: host, SNATIndex: idx, SelfIPs: []netip.Addr{self4, self6}}
	snap.Automap = AutomapOf(host, snap.SelfIPs, idx)
	auto := &SNATChoice{Set: true, Type: config.SNATAutomap}
	if src := SNATSource(vs, snap, client, host.Destination, dst, auto, nil); src.Addr() != self4 {
		t.Errorf("rule's automap: %v, want %v", src, self4)
	}
	if src := SNATSource(vs, snap, ap("[fd00:247::5]:40000"), ap("[fd00:247::10]:30000"), ap("[fd00:247::11]:30001"), nil, nil); src.Addr() != self6 {
		t.Errorf("IPv6: %v, want %v", src, self6)
	}
	if n, _ := reg.AddrConns(self4); n != 1 {
		t.Errorf("self IP's connections %d, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if h := SNATSourceHeld(vs, snap, client, host.Destination, dst, nil, nil); h.Hold != nil {
			h.Hold.Release()
		}
	}); n != 0 {
		t.Errorf("the resolved choice allocates %v times", n)
	}
}

// BenchmarkAutomapChoice: a virtual's automap source choice while the
// commit has ltm snat-translations (64, one of them automap's self IP's).
func BenchmarkAutomapChoice(b *testing.B) {
	self := netip.MustParseAddr("127.247.0.9")
	keep := []netip.Addr{self}
	for i := range 63 {
		keep = append(keep, netip.MustParseAddr(fmt.Sprintf("127.247.1.%d", i+1)))
	}
	var reg snatobj.Registry
	_, _, idx := reg.Build(nil, nil, keep, nil)
	vc := &config.Virtual{SNAT: config.SNAT{Type: config.SNATAutomap}, Destination: netip.MustParseAddrPort("127.247.0.10:30000")}
	snap := &VirtualSnap{Cfg: vc, SNATIndex: idx, SelfIPs: []netip.Addr{self}}
	snap.Automap = AutomapOf(vc, snap.SelfIPs, idx)
	vs := &Virtual{}
	client, local, dst := netip.MustParseAddrPort("127.247.2.5:40000"), vc.Destination, netip.MustParseAddrPort("127.247.0.11:30001")
	b.ReportAllocs()
	for b.Loop() {
		SNATSourceHeld(vs, snap, client, local, dst, nil, nil)
	}
}
