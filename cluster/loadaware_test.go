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
		want    []string
	}{
		{"no load: by name", map[string]int{}, nil, []string{"a", "b", "c"}},
		{"least loaded first", map[string]int{"a": 3, "b": 1, "c": 2}, nil, []string{"b", "c", "a"}},
		{"ties by name", map[string]int{"a": 2, "b": 2}, nil, []string{"c", "a", "b"}},
		{"standby last whatever its load", map[string]int{"a": 5}, map[string]bool{"b": true}, []string{"c", "a", "b"}},
	} {
		got := rankByLoad(TrafficGroup{Name: "tg"}, def, all, c.standby, nil, c.loads)
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
	}{
		{"alone", map[string]int{"a": 4}, []string{"a"}, 1, false},
		{"one group never moves", map[string]int{"a": 1}, []string{"b", "a"}, 1, false},
		{"two groups on one device: one moves", map[string]int{"a": 2}, []string{"b", "a"}, 1, true},
		{"even", map[string]int{"a": 1, "b": 1}, []string{"a", "b"}, 1, false},
		{"heavy group stays when moving it would not even out", map[string]int{"a": 4, "b": 1}, []string{"b", "a"}, 3, false},
		{"heavy group moves to an idle device", map[string]int{"a": 4}, []string{"b", "a"}, 3, true},
		{"light device told to go standby takes nothing", map[string]int{"a": 3}, []string{"a", "b"}, 1, false},
	} {
		standby := map[string]bool{}
		if c.name == "light device told to go standby takes nothing" {
			standby["b"] = true
		}
		if got := unbalanced(c.loads, c.cands, standby, "a", c.f); got != c.want {
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
