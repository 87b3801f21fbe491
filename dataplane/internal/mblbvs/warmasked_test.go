package mblbvs

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestWarmAsked: the destinations min-conn warms are the latest asked,
// each once, at most maxWarmDests, forgotten warmAskedFor after their
// last client; a destination automap left from keeps its via mark, and
// viaAddrs lists each such address once.
func TestWarmAsked(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := func(p int) netip.AddrPort { return netip.MustParseAddrPort(fmt.Sprintf("127.249.207.1:%d", p)) }
	to := func(ds []askedDest) []netip.AddrPort {
		var out []netip.AddrPort
		for _, x := range ds {
			out = append(out, x.to)
		}
		return out
	}
	var w warmAsked
	w.note(d(30001), true, t0)
	w.note(d(30002), false, t0.Add(time.Second))
	w.note(d(30001), false, t0.Add(2*time.Second)) // again: first, once, still via
	got := w.dests(t0.Add(3 * time.Second))
	if ds := to(got); len(ds) != 2 || ds[0] != d(30001) || ds[1] != d(30002) || !got[0].via || got[1].via {
		t.Fatalf("%v", got)
	}
	// 30002 ages out first.
	if ds := to(w.dests(t0.Add(time.Second + warmAskedFor))); len(ds) != 1 || ds[0] != d(30001) {
		t.Fatalf("after aging: %v", ds)
	}
	var full warmAsked
	for i := range maxWarmDests + 4 {
		full.note(d(30100+i), false, t0)
	}
	ds := to(full.dests(t0))
	if len(ds) != maxWarmDests || ds[0] != d(30100+maxWarmDests+3) || ds[maxWarmDests-1] != d(30104) {
		t.Fatalf("bounded: %d %v", len(ds), ds)
	}

	a := netip.MustParseAddr("127.249.208.1")
	b := netip.MustParseAddr("127.249.208.2")
	c := netip.MustParseAddr("127.249.208.3")
	vs := viaAddrs([]askedDest{
		{to: netip.AddrPortFrom(b, 30001), via: true},
		{to: netip.AddrPortFrom(a, 30001), via: true},
		{to: netip.AddrPortFrom(b, 30002), via: true},
		{to: netip.AddrPortFrom(c, 30001)},
	})
	if !slices.Equal(vs, []netip.Addr{b, a}) {
		t.Fatalf("viaAddrs: %v, want [%v %v]", vs, b, a)
	}
}
