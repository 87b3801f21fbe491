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
