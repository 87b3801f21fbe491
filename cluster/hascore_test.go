package cluster

import (
	"strconv"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
)

func TestHAPoolContribution(t *testing.T) {
	for _, c := range []struct {
		name string
		p    HAPool
		want int
	}{
		{"all up", HAPool{Weight: 50, Members: 4, Up: 4}, 50},
		{"three of four", HAPool{Weight: 50, Members: 4, Up: 3}, 37},
		{"none up", HAPool{Weight: 50, Members: 4, Up: 0}, 0},
		{"no members", HAPool{Weight: 50, Members: 0, Up: 0}, 0},
		{"under the minimum threshold", HAPool{Weight: 60, Members: 4, Up: 2, MinThreshold: 3}, 0},
		{"at the minimum threshold", HAPool{Weight: 60, Members: 4, Up: 3, MinThreshold: 3}, 45},
		{"sufficient threshold reached", HAPool{Weight: 40, Members: 4, Up: 2, SufficientThreshold: 2}, 40},
		{"half of sufficient", HAPool{Weight: 40, Members: 8, Up: 2, SufficientThreshold: 4}, 20},
		{"sufficient above members", HAPool{Weight: 40, Members: 2, Up: 1, SufficientThreshold: 5}, 20},
	} {
		if got := c.p.Contribution(); got != c.want {
			t.Errorf("%s: %+v contributes %d, want %d", c.name, c.p, got, c.want)
		}
	}
	if got := HAScore([]HAPool{{Weight: 50, Members: 2, Up: 1}, {Weight: 30, Members: 3, Up: 3}}); got != 55 {
		t.Errorf("score %d, want 55", got)
	}
}

func TestHAScoreRanking(t *testing.T) {
	def := GroupDef{Devices: []string{"a", "b", "c"}}
	alive := map[string]bool{"a": true, "b": true, "c": true}
	tg := TrafficGroup{Name: "tg", HAOrder: []string{"a", "b", "c"}, HAScore: true}
	for _, c := range []struct {
		scores  map[string]int
		standby map[string]bool
		want    string
	}{
		{map[string]int{"a": 10, "b": 30, "c": 20}, nil, "b"},
		{map[string]int{"a": 30, "b": 30, "c": 30}, nil, "a"},               // ties: ha-order
		{map[string]int{"a": 30, "b": 60}, map[string]bool{"b": true}, "a"}, // forced standby last
		{map[string]int{"c": 5}, nil, "c"},                                  // no score is 0
		{nil, nil, "a"},                                                     // not scored: ha-order
	} {
		got := rankCandidates(tg, def, alive, c.standby, c.scores)
		if got[0] != c.want {
			t.Errorf("scores %v standby %v: %v, want %s first", c.scores, c.standby, got, c.want)
		}
	}
	for _, c := range []struct {
		own, bonus, other int
		want              bool
	}{
		{100, 10, 105, false}, // the bonus keeps it
		{100, 10, 111, true},
		{100, 0, 101, true},
		{0, 10, 1, true}, // no bonus at 0
		{0, 10, 0, false},
	} {
		if got := outscored(map[string]int{"b": c.other}, []string{"b", "a"}, "a", c.own, c.bonus); got != c.want {
			t.Errorf("own %d bonus %d other %d: outscored %v, want %v", c.own, c.bonus, c.other, got, c.want)
		}
	}
}

// Two devices carry a scored traffic group: the active one's score drops
// below the other's plus nothing (its bonus is lost at 0), and the
// traffic group moves; a small dip within the bonus does not move it.
func TestHAScoreFailover(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncFailover, AutoSync: true, Devices: []string{"bigip1", "bigip2"}})
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2"}, HAScore: true, ActiveBonus: 10}
	d1 := join(t, srv, "bigip1", "dg1", tg)
	d1.m.SetScores(map[string]int{tg1: 100})
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	d2 := join(t, srv, "bigip2", "dg1", tg)
	d2.m.SetScores(map[string]int{tg1: 100})
	eventually(t, 5*time.Second, "both scores published", func() bool {
		s := d1.m.Scores(tg1)
		return s["bigip1"] == 100 && s["bigip2"] == 100
	})
	// Within the active bonus: no move.
	d1.m.SetScores(map[string]int{tg1: 95})
	eventually(t, 5*time.Second, "bigip2 sees 95", func() bool { return d2.m.Scores(tg1)["bigip1"] == 95 })
	time.Sleep(300 * time.Millisecond)
	if !d1.m.isActive(tg1) || d2.m.isActive(tg1) {
		t.Fatalf("a dip within the active bonus moved the traffic group: %v", activeOn(d1, d2))
	}
	// bigip1's pools go down.
	d1.m.SetScores(map[string]int{tg1: 0})
	eventually(t, 10*time.Second, "bigip2 takes over", func() bool { return d2.m.isActive(tg1) })
	eventually(t, 5*time.Second, "bigip1 standby", func() bool { return !d1.m.isActive(tg1) })
	st := d2.m.FailoverStatus()
	if len(st) != 1 || !st[0].Scored || st[0].Score != 100 || st[0].Owner != "bigip2" {
		t.Fatalf("status %+v", st)
	}
	// bigip1 recovers: bigip2 keeps it (equal scores, its bonus).
	d1.m.SetScores(map[string]int{tg1: 100})
	eventually(t, 5*time.Second, "bigip2 sees 100", func() bool { return d2.m.Scores(tg1)["bigip1"] == 100 })
	time.Sleep(300 * time.Millisecond)
	if !d2.m.isActive(tg1) {
		t.Fatalf("the traffic group flapped back: %v", activeOn(d1, d2))
	}
	if got := strconv.Itoa(d1.m.Scores(tg1)["bigip2"]); got != "100" {
		t.Fatalf("bigip2's score as bigip1 reads it: %s", got)
	}
}
