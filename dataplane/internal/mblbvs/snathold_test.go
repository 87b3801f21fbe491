package mblbvs

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// limitedAddr is a translation address with connection-limit limit, as
// a commit gives it out, its registry to read its counts back.
func limitedAddr(t *testing.T, a string, limit uint64) ([]*snatobj.Addr, *snatobj.Registry) {
	t.Helper()
	r := new(snatobj.Registry)
	x := netip.MustParseAddr(a)
	_, pools, _ := r.Build(nil, map[string][]netip.Addr{"sp": {x}}, nil, map[netip.Addr]config.SNATTranslation{x: {ConnLimit: limit}})
	return pools["sp"], r
}

// TestSNATHoldRelease: a leg's hold is given back once, by the leg's two
// ends; another leg's ends (the same local address to another member),
// an unknown leg and a second close give back nothing.
func TestSNATHoldRelease(t *testing.T) {
	local := netip.MustParseAddrPort("192.0.2.100:40000")
	m1, m2 := netip.MustParseAddrPort("198.51.100.1:80"), netip.MustParseAddrPort("198.51.100.2:80")
	for _, tc := range []struct {
		name     string
		holds    []netip.AddrPort // the members legs from local are held to
		releases []netip.AddrPort // the members of the legs closed
		want     int64            // connections holding the address after
	}{
		{"held then closed", []netip.AddrPort{m1}, []netip.AddrPort{m1}, 0},
		{"closed twice", []netip.AddrPort{m1}, []netip.AddrPort{m1, m1}, 0},
		{"another member's leg", []netip.AddrPort{m1, m2}, []netip.AddrPort{m2}, 1},
		{"an unknown leg", []netip.AddrPort{m1}, []netip.AddrPort{m2}, 1},
		{"nothing held", nil, []netip.AddrPort{m1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addrs, r := limitedAddr(t, "192.0.2.100", 10)
			mv := &VS{}
			var next atomic.Uint32
			for _, m := range tc.holds {
				_, h, err := snatobj.PickPool(addrs, &next, true, true, true)
				if err != nil || h == nil {
					t.Fatalf("pick: %v %v", h, err)
				}
				mv.holdSNAT(local, m, h)
			}
			for _, m := range tc.releases {
				mv.releaseSNAT(local, m)
			}
			if l, _ := r.AddrCurrent(addrs[0].Addr); l.Cur != tc.want {
				t.Errorf("%d holding the address, want %d", l.Cur, tc.want)
			}
			if mv.snatHeld.Load() != tc.want {
				t.Errorf("%d holds kept, want %d", mv.snatHeld.Load(), tc.want)
			}
		})
	}
	// A nil hold (an address without a limit) is not kept.
	mv := &VS{}
	mv.holdSNAT(local, m1, nil)
	if mv.snatHeld.Load() != 0 {
		t.Error("a nil hold was kept")
	}
}

// TestSNATHoldConcurrent (-race): legs opened and closed at once on many
// goroutines never hold more than the limit, and give every hold back.
func TestSNATHoldConcurrent(t *testing.T) {
	const limit = 3
	addrs, r := limitedAddr(t, "192.0.2.101", limit)
	mv := &VS{}
	var next atomic.Uint32
	var over atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, h, err := snatobj.PickPool(addrs, &next, true, true, true)
				if err != nil {
					continue // full
				}
				local := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.101"), uint16(20000+g*1000+i))
				remote := netip.MustParseAddrPort("198.51.100.1:80")
				mv.holdSNAT(local, remote, h)
				if l, _ := r.AddrCurrent(addrs[0].Addr); l.Cur > limit {
					over.Store(true)
				}
				mv.releaseSNAT(local, remote)
			}
		}()
	}
	wg.Wait()
	l, _ := r.AddrCurrent(addrs[0].Addr)
	if over.Load() || l.Max > limit || l.Cur != 0 || mv.snatHeld.Load() != 0 {
		t.Errorf("after: %+v, %d holds kept, over the limit %v", l, mv.snatHeld.Load(), over.Load())
	}
}

// TestSNATReleaseNoHoldAllocs: closing a leg of a virtual whose
// connections hold no translation address costs one atomic load, no
// allocation.
func TestSNATReleaseNoHoldAllocs(t *testing.T) {
	mv := &VS{}
	local, remote := netip.MustParseAddrPort("192.0.2.1:40000"), netip.MustParseAddrPort("198.51.100.1:80")
	if n := testing.AllocsPerRun(100, func() { mv.releaseSNAT(local, remote) }); n != 0 {
		t.Errorf("releaseSNAT with nothing held: %v allocations, want 0", n)
	}
}
