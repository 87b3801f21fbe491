package snatobj

import (
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestIndex: the addresses a rule names (and automap's) are counted and
// held through the commit's Index as a snatpool's are: only those whose
// ltm snat-translation has a limit or an idle timeout, a full one passed
// over for the next of the rule's addresses, ErrFull when none is left;
// no Index without settings; the count is the one the SNAT objects and
// snatpools share; no allocation.
func TestIndex(t *testing.T) {
	a1, a2, free, v6 := netip.MustParseAddr("127.242.0.1"), netip.MustParseAddr("127.242.0.2"), netip.MustParseAddr("127.242.0.3"), netip.MustParseAddr("::1")
	var r Registry
	if _, _, idx := r.Build(nil, map[string][]netip.Addr{"/Common/sp": {a1}}, nil, nil); idx != nil {
		t.Fatal("an Index without settings")
	}
	if (*Index)(nil).Of(a1) != nil {
		t.Fatal("a nil Index gave an address")
	}
	settings := map[netip.Addr]config.SNATTranslation{a1: {ConnLimit: 1}, a2: {ConnLimit: 1}}
	_, byPool, idx := r.Build(nil, map[string][]netip.Addr{"/Common/sp": {a1}}, nil, settings)
	if idx.Of(free) != nil || idx.Of(a2) == nil || idx.Of(a1) != byPool["/Common/sp"][0] {
		t.Fatal("Index: want a1 (the snatpool's own Addr) and a2 only")
	}
	var next atomic.Uint32
	rule := []netip.Addr{a1, a2, v6}
	type step struct {
		addrs   []netip.Addr
		want    netip.Addr
		held    bool
		full    bool
		release int // give back the hold of step release-1 first
	}
	var holds []*Addr
	for i, st := range []step{
		{addrs: rule, want: a1, held: true},
		{addrs: rule, want: a2, held: true},
		{addrs: rule, full: true},
		{addrs: []netip.Addr{a1, free}, want: free}, // a1 full: the next, not counted
		{addrs: rule, release: 1, want: a1, held: true},
		{addrs: []netip.Addr{free}, want: free},
	} {
		if st.release > 0 {
			holds[st.release-1].Release()
		}
		next.Store(^uint32(0)) // each turn starts at the first address
		a, h, err := idx.PickAddrs(st.addrs, &next, true, true, true)
		holds = append(holds, h)
		switch {
		case st.full && (err != ErrFull || a.IsValid() || h != nil):
			t.Fatalf("step %d: %v %v %v, want ErrFull", i, a, h, err)
		case !st.full && (err != nil || a != st.want || (h != nil) != st.held):
			t.Fatalf("step %d: %v hold %v err %v, want %v held %v", i, a, h, err, st.want, st.held)
		}
	}
	// The snatpool a virtual gives out shares a1's count.
	if x, h, err := PickPool(byPool["/Common/sp"], &next, true, true, true); err != ErrFull {
		t.Errorf("the virtual's snatpool while a rule holds a1: %v %v %v, want ErrFull", x, h, err)
	}
	if l, _ := r.AddrCurrent(a1); l.Cur != 1 || l.Refused != 2 {
		t.Errorf("a1 %+v, want 1 current, 2 refused (a connection passed on to another address is not refused)", l)
	}
	if h, err := idx.Take(a1, true, true); err != ErrFull || h != nil {
		t.Errorf("Take of a full a1: %v %v", h, err)
	}
	holds[4].Release()
	if h, err := idx.Take(a1, true, true); err != nil || h == nil {
		t.Errorf("Take of a1 given back: %v %v", h, err)
	} else {
		h.Release()
	}
	if h, err := idx.Take(free, true, true); err != nil || h != nil {
		t.Errorf("Take of an address without settings: %v %v", h, err)
	}
	if a, h, err := idx.PickAddrs(rule, &next, false, true, true); a != v6 || h != nil || err != nil {
		t.Errorf("IPv6: %v %v %v, want ::1 uncounted", a, h, err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, h, _ := idx.PickAddrs(rule, &next, true, true, true); h != nil {
			h.Release()
		}
		idx.Take(free, true, true)
	}); n != 0 {
		t.Errorf("PickAddrs and Take allocate %v times", n)
	}
}

// TestIndexCountsTranslations: an address with an ltm snat-translation
// and no setting is in the Index, so a rule's choice of it is counted
// (Total Connections) without a hold; an address without one is given
// uncounted and has no counters (show does not list it); no allocation.
func TestIndexCountsTranslations(t *testing.T) {
	obj, bare := netip.MustParseAddr("127.255.139.1"), netip.MustParseAddr("127.255.139.2")
	var r Registry
	_, _, idx := r.Build(nil, nil, []netip.Addr{obj}, nil)
	if idx == nil || idx.Of(obj) == nil || idx.Of(bare) != nil {
		t.Fatal("Index: want the ltm snat-translation's address only")
	}
	if h, err := idx.Take(obj, true, true); h != nil || err != nil {
		t.Fatalf("Take of an address without a setting: hold %v err %v, want none", h, err)
	}
	var next atomic.Uint32
	if a, h, err := idx.PickAddrs([]netip.Addr{obj}, &next, true, true, true); a != obj || h != nil || err != nil {
		t.Fatalf("PickAddrs: %v %v %v", a, h, err)
	}
	if a, h, err := idx.PickAddrs([]netip.Addr{bare}, &next, true, true, true); a != bare || h != nil || err != nil {
		t.Fatalf("PickAddrs of an address without a translation: %v %v %v", a, h, err)
	}
	if n, ok := r.AddrConns(obj); !ok || n != 2 {
		t.Errorf("the translation's address: %d connections (%v), want 2", n, ok)
	}
	if _, ok := r.AddrConns(bare); ok {
		t.Error("an address without an ltm snat-translation has counters")
	}
	if _, ok := r.AddrCurrent(obj); ok {
		t.Error("current connections kept for an address without a limit")
	}
	// count false (a source asked for no connection) counts nothing.
	idx.Take(obj, false, false)
	if n, _ := r.AddrConns(obj); n != 2 {
		t.Errorf("count false counted: %d", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		idx.Take(obj, true, true)
		idx.PickAddrs([]netip.Addr{bare, obj}, &next, true, true, true)
	}); n != 0 {
		t.Errorf("%v allocations per choice, want 0", n)
	}
}
