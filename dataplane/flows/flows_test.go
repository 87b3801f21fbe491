package flows

import (
	"net/netip"
	"testing"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestFilterMatch(t *testing.T) {
	withLeg := Record{CSClient: ap("127.0.0.1:5000"), CSServer: ap("127.1.0.1:80"),
		SSClient: ap("127.0.0.1:5000"), SSServer: ap("127.1.0.2:9000"), Protocol: "tcp"}
	noLeg := Record{CSClient: ap("127.0.0.1:5001"), CSServer: ap("127.1.0.1:80"), Protocol: "tcp"}
	for _, tc := range []struct {
		name string
		f    Filter
		r    Record
		want bool
	}{
		{"zero matches all", Filter{}, withLeg, true},
		{"client addr", Filter{CSClientAddr: netip.MustParseAddr("127.0.0.1")}, withLeg, true},
		{"client addr miss", Filter{CSClientAddr: netip.MustParseAddr("127.0.0.2")}, withLeg, false},
		{"client port", Filter{CSClientPort: 5000}, withLeg, true},
		{"client port miss", Filter{CSClientPort: 5001}, withLeg, false},
		{"server port", Filter{CSServerPort: 80}, noLeg, true},
		{"ss-server on leg", Filter{SSServerAddr: netip.MustParseAddr("127.1.0.2"), SSServerPort: 9000}, withLeg, true},
		{"ss-server without leg", Filter{SSServerAddr: netip.MustParseAddr("127.1.0.2")}, noLeg, false},
		{"ss-client port without leg", Filter{SSClientPort: 5000}, noLeg, false},
		{"protocol", Filter{Protocol: "udp"}, withLeg, false},
		{"mapped v4 equals v4", Filter{CSClientAddr: netip.MustParseAddr("::ffff:127.0.0.1")}, withLeg, true},
	} {
		if got := tc.f.Match(&tc.r); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTableWalkLegsAndRemove(t *testing.T) {
	tb := NewTable()
	a := &Flow{Client: ap("127.0.0.1:1000"), Local: ap("127.1.0.1:80"), Protocol: "tcp"}
	b := &Flow{Client: ap("127.0.0.1:1001"), Local: ap("127.1.0.1:80"), Protocol: "tcp"}
	tb.Add(a)
	tb.Add(b)
	l1 := &Leg{Client: ap("127.0.0.1:1000"), Server: ap("127.1.0.2:9000")}
	l2 := &Leg{Client: ap("127.0.0.1:2000"), Server: ap("127.1.0.3:9001")}
	b.AddLeg(l1)
	b.AddLeg(l2)
	if n := tb.Walk(Filter{}, func(*Record) bool { return true }); n != 3 {
		t.Fatalf("records = %d, want 3 (one bare flow, two legs)", n)
	}
	if n := tb.Walk(Filter{SSServerPort: 9001}, func(*Record) bool { return true }); n != 1 {
		t.Fatalf("filtered records = %d, want 1", n)
	}
	if got := tb.Matching(Filter{SSServerPort: 9001}); len(got) != 1 || got[0] != b {
		t.Fatalf("Matching = %v", got)
	}
	b.RemoveLeg(l1)
	if n := tb.Walk(Filter{}, func(*Record) bool { return true }); n != 2 {
		t.Fatalf("after RemoveLeg records = %d, want 2", n)
	}
	tb.Remove(a)
	tb.Remove(a)
	if tb.Len() != 1 {
		t.Fatalf("Len = %d, want 1", tb.Len())
	}
	stopped := tb.Walk(Filter{}, func(*Record) bool { return false })
	if stopped != 1 {
		t.Fatalf("Walk stopped after %d, want 1", stopped)
	}
}

// TestWalkStreamsLargeTable checks that walking 100,000 flows visits each
// once and does not retain the records it hands out.
func TestWalkStreamsLargeTable(t *testing.T) {
	tb := NewTable()
	const n = 100000
	for i := 0; i < n; i++ {
		tb.Add(&Flow{Client: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(i%60000+1)), Protocol: "tcp"})
	}
	seen := make(map[uint64]bool, n)
	var prev *Record
	reused := false
	tb.Walk(Filter{}, func(r *Record) bool {
		if seen[r.ID] {
			t.Fatalf("flow %d seen twice", r.ID)
		}
		seen[r.ID] = true
		if prev == r {
			reused = true
		}
		prev = r
		return true
	})
	if len(seen) != n {
		t.Fatalf("saw %d flows, want %d", len(seen), n)
	}
	if !reused {
		t.Fatalf("Walk handed out a fresh record per flow; it should reuse one buffer")
	}
}

func BenchmarkAddRemove(b *testing.B) {
	tb := NewTable()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f := &Flow{Protocol: "tcp"}
			tb.Add(f)
			tb.Remove(f)
		}
	})
}

// TestLegsFirstStorage: the first leg lives in the flow's own storage,
// and a slice a reader took stays as it was through later changes.
func TestLegsFirstStorage(t *testing.T) {
	var f Flow
	l1, l2, l3 := &Leg{}, &Leg{}, &Leg{}
	steps := []struct {
		add, remove *Leg
		want        []*Leg
	}{
		{add: l1, want: []*Leg{l1}},
		{remove: l1, want: []*Leg{}},
		{add: l2, want: []*Leg{l2}},
		{add: l3, want: []*Leg{l2, l3}},
		{remove: l2, want: []*Leg{l3}},
	}
	var held [][]*Leg
	for i, s := range steps {
		if s.add != nil {
			f.AddLeg(s.add)
		}
		if s.remove != nil {
			f.RemoveLeg(s.remove)
		}
		got := f.Legs()
		if len(got) != len(s.want) {
			t.Fatalf("step %d: %d legs, want %d", i, len(got), len(s.want))
		}
		for j := range got {
			if got[j] != s.want[j] {
				t.Fatalf("step %d: leg %d is not the one added", i, j)
			}
		}
		held = append(held, got)
	}
	for i, h := range held { // what each reader took is unchanged
		for j := range h {
			if h[j] != steps[i].want[j] {
				t.Fatalf("the slice read at step %d changed later", i)
			}
		}
	}
	var g Flow
	if n := testing.AllocsPerRun(10, func() { g = Flow{}; g.AddLeg(l1) }); n != 0 {
		t.Errorf("the first leg allocated %v times, want 0", n)
	}
}
