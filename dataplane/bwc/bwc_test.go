package bwc

import (
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestAttach: a static policy's flows share one bucket; a dynamic one's
// instances are their own, kept while a flow holds them; a policy whose
// settings did not change keeps its counters across Apply.
func TestAttach(t *testing.T) {
	var s Set
	cfg := map[string]*config.BWCPolicy{
		"/Common/s": {Name: "/Common/s", MaxRate: 2e6},
		"/Common/d": {Name: "/Common/d", MaxRate: 10e6, MaxUserRate: 1e6, Dynamic: true},
	}
	s.Apply(cfg)
	st, dy := s.Policy("/Common/s"), s.Policy("/Common/d")
	a1 := dy.Attach("a")
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"static shared", st.Attach("") == st.Attach("x")},
		{"dynamic per instance", dy.Attach("a") != dy.Attach("b")},
		{"dynamic same instance", dy.Attach("a") == a1},
		{"static not dynamic", !st.Attach("").Dynamic()},
		{"nil policy", (*Policy)(nil).Attach("a") == nil},
		{"missing", s.Policy("/Common/none") == nil},
	} {
		if !c.ok {
			t.Errorf("%s", c.name)
		}
	}
	b := dy.Attach("c")
	if dy.Instances() != 3 {
		t.Fatalf("instances %d, want 3 (a, b, c)", dy.Instances())
	}
	b.Release()
	if dy.Instances() != 2 {
		t.Fatalf("after c's release: %d instances", dy.Instances())
	}
	st.Attach("").Wait(1000)
	s.Apply(cfg)
	if s.Policy("/Common/s") != st || st.Passed.Load() != 1000 {
		t.Fatal("an unchanged policy was replaced")
	}
	s.Apply(map[string]*config.BWCPolicy{"/Common/s": {Name: "/Common/s", MaxRate: 4e6}})
	if s.Policy("/Common/s") == st || s.Policy("/Common/d") != nil {
		t.Fatal("a changed policy was kept, or a deleted one")
	}
}
