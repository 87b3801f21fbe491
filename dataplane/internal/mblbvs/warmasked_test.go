package mblbvs

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestWarmAsked: the destinations min-conn warms are the latest asked,
// each once, at most maxWarmDests, forgotten warmAskedFor after their
// last client.
func TestWarmAsked(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := func(p int) netip.AddrPort { return netip.MustParseAddrPort(fmt.Sprintf("127.239.7.1:%d", p)) }
	var w warmAsked
	w.note(d(30001), t0)
	w.note(d(30002), t0.Add(time.Second))
	w.note(d(30001), t0.Add(2*time.Second)) // again: first, once
	if got := w.dests(t0.Add(3 * time.Second)); len(got) != 2 || got[0] != d(30001) || got[1] != d(30002) {
		t.Fatalf("%v", got)
	}
	// 30002 ages out first.
	if got := w.dests(t0.Add(time.Second + warmAskedFor)); len(got) != 1 || got[0] != d(30001) {
		t.Fatalf("after aging: %v", got)
	}
	var full warmAsked
	for i := range maxWarmDests + 4 {
		full.note(d(30100+i), t0)
	}
	got := full.dests(t0)
	if len(got) != maxWarmDests || got[0] != d(30100+maxWarmDests+3) || got[maxWarmDests-1] != d(30104) {
		t.Fatalf("bounded: %d %v", len(got), got)
	}
}
