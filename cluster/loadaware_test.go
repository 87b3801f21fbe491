package cluster

import (
	"slices"
	"testing"
)

func TestRankByLoad(t *testing.T) {
	def := GroupDef{Name: "dg", Type: SyncFailover, Devices: []string{"a", "b", "c"}}
	all := map[string]bool{"a": true, "b": true, "c": true}
	for _, c := range []struct {
		name    string
		loads   map[string]int
		standby map[string]bool
		caps    map[string]int
		want    []string
	}{
		{"no load: by name", map[string]int{}, nil, nil, []string{"a", "b", "c"}},
		{"least loaded first", map[string]int{"a": 3, "b": 1, "c": 2}, nil, nil, []string{"b", "c", "a"}},
		{"ties by name", map[string]int{"a": 2, "b": 2}, nil, nil, []string{"c", "a", "b"}},
		{"standby last whatever its load", map[string]int{"a": 5}, map[string]bool{"b": true}, nil, []string{"c", "a", "b"}},
		// With capacities, the load a device would carry with the
		// group (factor 1) over its capacity: a 3/4, b 2/1, c 3/2.
		{"least used first", map[string]int{"a": 2, "b": 1, "c": 2}, nil, map[string]int{"a": 4, "b": 1, "c": 2}, []string{"a", "c", "b"}},
		{"a big device takes a second group before a small one its first", map[string]int{"a": 1}, nil, map[string]int{"a": 3, "b": 1, "c": 1}, []string{"a", "b", "c"}},
		// a 2/1 and b 4/2 tie (by name), c 1/1 first.
		{"equal use ties by name", map[string]int{"a": 1, "b": 3}, nil, map[string]int{"a": 1, "b": 2, "c": 1}, []string{"c", "a", "b"}},
	} {
		got := rankByLoad(TrafficGroup{Name: "tg"}, def, all, c.standby, nil, c.loads, c.caps)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUnbalanced(t *testing.T) {
	for _, c := range []struct {
		name  string
		loads map[string]int
		cands []string
		f     int
		want  bool
		caps  map[string]int
	}{
		{"alone", map[string]int{"a": 4}, []string{"a"}, 1, false, nil},
		{"one group never moves", map[string]int{"a": 1}, []string{"b", "a"}, 1, false, nil},
		{"two groups on one device: one moves", map[string]int{"a": 2}, []string{"b", "a"}, 1, true, nil},
		{"even", map[string]int{"a": 1, "b": 1}, []string{"a", "b"}, 1, false, nil},
		{"heavy group stays when moving it would not even out", map[string]int{"a": 4, "b": 1}, []string{"b", "a"}, 3, false, nil},
		{"heavy group moves to an idle device", map[string]int{"a": 4}, []string{"b", "a"}, 3, true, nil},
		{"light device told to go standby takes nothing", map[string]int{"a": 3}, []string{"a", "b"}, 1, false, nil},
		// a carries 2 on a capacity of 1, b nothing on 4: one moves.
		{"capacities: a small busy device gives one to a big idle one", map[string]int{"a": 2}, []string{"b", "a"}, 1, true, map[string]int{"a": 1, "b": 4}},
		// a 3 of 3, b 1 of 1: moving one would leave b at 2 of 1.
		{"capacities: even use stays", map[string]int{"a": 3, "b": 1}, []string{"b", "a"}, 1, false, map[string]int{"a": 3, "b": 1}},
		// Without capacities 3 against 1 would move one (1+1 < 3).
		{"capacities: a big device keeps more", map[string]int{"a": 3, "b": 1}, []string{"b", "a"}, 1, false, map[string]int{"a": 2, "b": 1}},
	} {
		standby := map[string]bool{}
		if c.name == "light device told to go standby takes nothing" {
			standby["b"] = true
		}
		if got := unbalanced(c.loads, c.caps, c.cands, standby, "a", c.f); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLoadFactorRange(t *testing.T) {
	def := GroupDef{Name: "dg", Type: SyncFailover, Devices: []string{"a", "b"}}
	for _, c := range []struct {
		f  int
		ok bool
	}{{0, true}, {1, true}, {1000, true}, {1001, false}, {-1, false}} {
		err := checkTrafficGroups(def, []TrafficGroup{{Name: "tg", LoadFactor: c.f}})
		if (err == nil) != c.ok {
			t.Errorf("ha-load-factor %d: err %v", c.f, err)
		}
	}
	if (TrafficGroup{HAOrder: []string{"a"}}).LoadAware() || (TrafficGroup{HAScore: true}).LoadAware() || !(TrafficGroup{}).LoadAware() {
		t.Error("LoadAware: only a traffic group with neither ha-order nor ha-group is load-aware")
	}
}
