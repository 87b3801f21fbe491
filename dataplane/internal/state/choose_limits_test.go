package state

import "testing"

// TestChooseRuleLimits: a rule's LB::connlimit limits keep members with
// that many connections (or whose node has) out of the balancing, and a
// named member over them is not taken; the zero value changes nothing.
func TestChooseRuleLimits(t *testing.T) {
	for _, c := range []struct {
		name    string
		limits  RuleLimits
		reserve []int // connections on each member (one node)
		named   int   // member a rule names, -1 none
		want    int   // member chosen, -1 none
	}{
		{"member limit passes over the full one", RuleLimits{Member: 1}, []int{1, 0}, -1, 1},
		{"every member at the limit", RuleLimits{Member: 1}, []int{1, 1}, -1, -1},
		{"below the limit", RuleLimits{Member: 2}, []int{1, 1}, -1, 0},
		{"node limit", RuleLimits{Node: 2}, []int{1, 1}, -1, -1},
		{"node room", RuleLimits{Node: 3}, []int{0, 2}, -1, 0},
		{"named member over it", RuleLimits{Member: 1}, []int{1, 0}, 0, -1},
		{"named member under it", RuleLimits{Member: 1}, []int{0, 1}, 0, 0},
		{"no limits", RuleLimits{}, []int{5, 5}, -1, 0},
	} {
		p := queuePool(false, 0, 0, 0)
		ms := p.Snap.Load().Members
		for i, n := range c.reserve {
			for k := 0; k < n; k++ {
				ms[i].Stats.TryOpen(0)
				ms[i].Node.Stats.TryOpen(0)
			}
		}
		var tg Target
		if c.named >= 0 {
			tg = Target{Addr: ms[c.named].Cfg.Load().Addr, Accept: AvailDown}
		}
		got, _, _ := Choose(p, tg, nil, nil, Chooser{Limits: c.limits})
		var want *Member
		if c.want >= 0 {
			want = ms[c.want]
		}
		if got != want {
			t.Errorf("%s: chose %v, want %v", c.name, got, want)
		}
	}
}

// TestKeyHolds: keyed limits (LB::connlimit ... key) count only the
// connections with the same key: a key at its member limit passes over
// that member while another key still takes it; a connection balanced
// anew moves its count, its own count never keeps it out, and Release
// gives every count back; a keyed virtual limit fails only its key.
func TestKeyHolds(t *testing.T) {
	p := queuePool(false, 0, 0, 0)
	ms := p.Snap.Load().Members
	lim := RuleLimits{Member: 1, MemberKey: "a"}
	var h1, h2, h3 KeyHolds
	choose := func(h *KeyHolds, l RuleLimits, named int) *Member {
		var tg Target
		if named >= 0 {
			tg = Target{Addr: ms[named].Cfg.Load().Addr, Accept: AvailDown}
		}
		m, _, _ := Choose(p, tg, nil, nil, Chooser{Limits: l, Holds: h})
		return m
	}
	if m := choose(&h1, lim, 0); m != ms[0] || KeyCount(ms[0], "a") != 1 {
		t.Fatalf("first a: %v, count %d", m, KeyCount(ms[0], "a"))
	}
	if m := choose(&h2, lim, -1); m != ms[1] {
		t.Fatalf("second a chose %v, want the member a holds none on", m)
	}
	if m := choose(&h3, lim, -1); m != nil {
		t.Fatalf("third a chose %v with a at its limit on both", m)
	}
	if m := choose(&h3, RuleLimits{Member: 1, MemberKey: "b"}, -1); m == nil {
		t.Fatalf("b found no member while only a is at its limit")
	}
	if m := choose(&h1, lim, 0); m != ms[0] || KeyCount(ms[0], "a") != 1 {
		t.Fatalf("a connection balanced again to its own member: %v, count %d", m, KeyCount(ms[0], "a"))
	}
	h1.Release()
	h2.Release()
	h3.Release()
	if KeyCount(ms[0], "a")+KeyCount(ms[1], "a")+KeyCount(ms[0], "b")+KeyCount(ms[1], "b") != 0 {
		t.Fatalf("counts left after Release")
	}
	v := &Virtual{}
	vl := RuleLimits{Virtual: 1, VirtualKey: "a"}
	if vl.VirtualOver(v, &h1) || !vl.VirtualOver(v, &h2) || vl.VirtualOver(v, &h1) {
		t.Fatalf("keyed virtual limit 1: the first a over it, or the second not")
	}
	if (&RuleLimits{Virtual: 1, VirtualKey: "b"}).VirtualOver(v, &h3) {
		t.Fatalf("b over a's keyed virtual limit")
	}
	h1.Release()
	h3.Release()
	if KeyCount(v, "a") != 0 || KeyCount(v, "b") != 0 {
		t.Fatalf("virtual counts left after Release")
	}
}
