package bwc

import (
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestAttach: each flow has its own bucket; a dynamic policy's flows of
// one instance share its limits, kept while a flow holds them; a policy whose
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
	s1, s2 := st.Attach(""), st.Attach("")
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"static own bucket", s1 != s2},
		{"dynamic per instance", dy.Attach("a").in != dy.Attach("b").in},
		{"dynamic same instance", dy.Attach("a").in == a1.in},
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

// TestClassify: a dynamic policy's categories are found by name; a
// flow's marking is BWC::mark's, else its category's where set, else
// the policy's; levels outside 0 to 7 are refused.
func TestClassify(t *testing.T) {
	var s Set
	s.Apply(map[string]*config.BWCPolicy{"/Common/d": {
		Name: "/Common/d", MaxRate: 10e6, Dynamic: true, Mark: config.BWCMark{TOS: 8, QoS: -1},
		Categories: []config.BWCCategory{
			{Name: "p2p", MaxRate: 1e6, Mark: config.BWCMark{TOS: -1, QoS: 3}},
			{Name: "video", MaxRate: 5e6, Mark: config.BWCMark{TOS: 32, QoS: 5}},
		},
	}})
	p := s.Policy("/Common/d")
	for _, c := range []struct {
		name  string
		cat   string
		own   *config.BWCMark
		level int
		want  config.BWCMark
		ok    bool
	}{
		{name: "policy's", want: config.BWCMark{TOS: 8, QoS: -1}, ok: true},
		{name: "category over policy where set", cat: "p2p", want: config.BWCMark{TOS: 8, QoS: 3}, ok: true},
		{name: "category's both", cat: "video", want: config.BWCMark{TOS: 32, QoS: 5}, level: 7, ok: true},
		{name: "BWC::mark over all", cat: "video", own: &config.BWCMark{TOS: 0, QoS: -1}, want: config.BWCMark{TOS: 0, QoS: -1}, ok: true},
		{name: "pass-through both", own: &config.BWCMark{TOS: -1, QoS: -1}, want: config.BWCMark{TOS: -1, QoS: -1}, ok: true},
		{name: "no such category", cat: "mail", want: config.BWCMark{TOS: 8, QoS: -1}},
		{name: "level too high", level: 8, want: config.BWCMark{TOS: 8, QoS: -1}},
		{name: "level negative", level: -1, want: config.BWCMark{TOS: 8, QoS: -1}},
	} {
		b := p.Attach("u")
		ok := b.SetLevel(c.level)
		if c.cat != "" {
			ok = b.SetCategory(c.cat) && ok
		}
		if c.own != nil {
			b.SetMark(*c.own)
		}
		if ok != c.ok || b.Mark() != c.want {
			t.Errorf("%s: ok %v mark %+v, want %v %+v", c.name, ok, b.Mark(), c.ok, c.want)
		}
		b.Release()
	}
	if p.Instances() != 0 {
		t.Fatalf("instances left: %d", p.Instances())
	}
}

// TestPriorityYields: a flow of a lower level does not take the
// policy's bucket while one of a higher level waits for it.
func TestPriorityYields(t *testing.T) {
	var s Set
	s.Apply(map[string]*config.BWCPolicy{"/Common/s": {Name: "/Common/s", MaxRate: 8e6}})
	p := s.Policy("/Common/s")
	p.active[5].Add(1) // a level-5 flow waits
	low := p.Attach("")
	done := make(chan struct{})
	go func() {
		low.Wait(100)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("a level-0 flow passed while a level-5 one waited")
	case <-time.After(100 * time.Millisecond):
	}
	p.active[5].Add(-1)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the level-0 flow never passed")
	}
	high := p.Attach("")
	high.SetLevel(7)
	p.active[5].Add(1)
	high.Wait(100) // a higher level does not wait for a lower one
	p.active[5].Add(-1)
}
