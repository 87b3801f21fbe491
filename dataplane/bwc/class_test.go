package bwc

import (
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// classes builds a running set of classes from cfgs (parents by name).
func classes(t *testing.T, cfgs ...config.RateClass) *Set {
	t.Helper()
	m := map[string]*config.RateClass{}
	for i := range cfgs {
		m[cfgs[i].Name] = &cfgs[i]
	}
	s := &Set{}
	s.ApplyClasses(m)
	return s
}

// throughput keeps a flow busy on each class (round robin, a chunk at a
// time) for span of simulated time: each flow sends its next chunk when
// its last take allows. It returns each class's bits per second.
func throughput(s *Set, span time.Duration, names ...string) []float64 {
	t0 := time.Unix(1_000_000, 0)
	end := t0.Add(span)
	next := make([]time.Time, len(names))
	sent := make([]int, len(names))
	for i := range next {
		next[i] = t0
	}
	for step := 0; step < 1_000_000; step++ { // bounded
		// The flow whose turn comes first sends.
		i := 0
		for j := range names {
			if next[j].Before(next[i]) {
				i = j
			}
		}
		if !next[i].Before(end) {
			break
		}
		c := s.Class(names[i]).class
		d, _ := c.take(next[i], classChunk)
		next[i] = next[i].Add(d)
		sent[i] += classChunk
	}
	out := make([]float64, len(names))
	for i := range names {
		out[i] = float64(sent[i]*8) / span.Seconds()
	}
	return out
}

func TestClassRates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes []config.RateClass
		flows   []string
		// lo and hi bound each flow's simulated rate, bits per second.
		lo, hi []float64
		// total bounds the flows' sum (0: not checked).
		total float64
	}{
		{"rate alone", []config.RateClass{{Name: "a", Rate: 2e6, Ceiling: 2e6}},
			[]string{"a"}, []float64{1.9e6}, []float64{2.1e6}, 0},
		{"ceiling without a parent is the rate", []config.RateClass{{Name: "a", Rate: 2e6, Ceiling: 8e6}},
			[]string{"a"}, []float64{1.9e6}, []float64{2.1e6}, 0},
		{"borrows an idle parent's spare up to its ceiling", []config.RateClass{
			{Name: "p", Rate: 8e6, Ceiling: 8e6},
			{Name: "a", Rate: 1e6, Ceiling: 4e6, Parent: "p"}},
			[]string{"a"}, []float64{3.8e6}, []float64{4.2e6}, 0},
		{"parent's rate bounds the borrowing", []config.RateClass{
			{Name: "p", Rate: 3e6, Ceiling: 3e6},
			{Name: "a", Rate: 1e6, Ceiling: 8e6, Parent: "p"}},
			[]string{"a"}, []float64{2.8e6}, []float64{3.2e6}, 0},
		{"busy siblings share the parent, each at least its rate", []config.RateClass{
			{Name: "p", Rate: 6e6, Ceiling: 6e6},
			{Name: "a", Rate: 1e6, Ceiling: 6e6, Parent: "p"},
			{Name: "b", Rate: 4e6, Ceiling: 6e6, Parent: "p"}},
			[]string{"a", "b"}, []float64{0.95e6, 3.9e6}, []float64{2.2e6, 5.1e6}, 6.2e6},
		{"no ceiling: siblings keep to their rates", []config.RateClass{
			{Name: "p", Rate: 10e6, Ceiling: 10e6},
			{Name: "a", Rate: 1e6, Ceiling: 1e6, Parent: "p"},
			{Name: "b", Rate: 2e6, Ceiling: 2e6, Parent: "p"}},
			[]string{"a", "b"}, []float64{0.95e6, 1.9e6}, []float64{1.1e6, 2.1e6}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := throughput(classes(t, tc.classes...), 20*time.Second, tc.flows...)
			sum := 0.0
			for i, r := range got {
				sum += r
				if r < tc.lo[i] || r > tc.hi[i] {
					t.Errorf("%s: %.3g bps, want %.3g to %.3g", tc.flows[i], r, tc.lo[i], tc.hi[i])
				}
			}
			if tc.total > 0 && sum > tc.total {
				t.Errorf("together %.3g bps, more than the parent's %.3g", sum, tc.total)
			}
		})
	}
}

// A pause fills the rate's bucket up to max-burst: that much passes at
// once, the rest at the rate.
func TestClassMaxBurst(t *testing.T) {
	s := classes(t, config.RateClass{Name: "a", Rate: 1e6, Ceiling: 1e6, MaxBurst: 4 * classChunk})
	c := s.Class("a").class
	now := time.Unix(1_000_000, 0)
	for i := 0; i < 4; i++ {
		if d, _ := c.take(now, classChunk); d != 0 {
			t.Fatalf("chunk %d within max-burst waits %v", i, d)
		}
	}
	if d, _ := c.take(now, classChunk); d <= 0 {
		t.Fatalf("a chunk beyond max-burst does not wait")
	}
}

// A class shapes its direction only; the other passes uncounted.
func TestClassDirection(t *testing.T) {
	s := classes(t, config.RateClass{Name: "a", Rate: 1e9, Ceiling: 1e9, Direction: config.RateToClient})
	b := s.Class("a").Attach("")
	b.WaitDir(1000, true)
	if got := s.Class("a").ClassStats().Bytes; got != 0 {
		t.Fatalf("to-server bytes counted on a to-client class: %d", got)
	}
	b.WaitDir(1000, false)
	if got := s.Class("a").ClassStats().Bytes; got != 1000 {
		t.Fatalf("to-client bytes: %d, want 1000", got)
	}
}

// A class chained after a bwc policy's bucket counts the flow's bytes
// too; Inherit carries it over to the policy a rule attaches next.
func TestClassChained(t *testing.T) {
	s := classes(t, config.RateClass{Name: "c", Rate: 1e9, Ceiling: 1e9})
	cls := s.Class("c")
	pol := newPolicy(config.BWCPolicy{Name: "p", MaxRate: 1e9, Mark: config.BWCMark{TOS: -1, QoS: -1}})
	b := pol.AttachClass("", cls)
	b.WaitDir(500, false)
	if cls.ClassStats().Bytes != 500 || pol.Passed.Load() != 500 {
		t.Fatalf("class %d, policy %d bytes; want 500 each", cls.ClassStats().Bytes, pol.Passed.Load())
	}
	nb, swap := WithClass(nil, cls, "")
	if !swap || nb.Policy() != cls {
		t.Fatalf("a flow on no bucket is put on the class's own")
	}
	pol2 := newPolicy(config.BWCPolicy{Name: "q", MaxRate: 1e9, Mark: config.BWCMark{TOS: -1, QoS: -1}})
	b2 := pol2.Attach("")
	b2.Inherit(nb)
	if b2.Class() == nil || b2.Class().Policy() != cls {
		t.Fatalf("Inherit lost the rate class")
	}
}

// Apply keeps an unchanged class (and its counters), renews one whose
// parent changed.
func TestApplyClassesKeeps(t *testing.T) {
	p := config.RateClass{Name: "p", Rate: 1e6, Ceiling: 1e6}
	a := config.RateClass{Name: "a", Rate: 1e6, Ceiling: 2e6, Parent: "p"}
	s := classes(t, p, a)
	oldA, oldP := s.Class("a"), s.Class("p")
	s.ApplyClasses(map[string]*config.RateClass{"p": &p, "a": &a})
	if s.Class("a") != oldA || s.Class("p") != oldP {
		t.Fatalf("unchanged classes were renewed")
	}
	p2 := p
	p2.Rate, p2.Ceiling = 2e6, 2e6
	s.ApplyClasses(map[string]*config.RateClass{"p": &p2, "a": &a})
	if s.Class("a") == oldA || s.Class("a").class.parent != s.Class("p").class {
		t.Fatalf("a class under a changed parent kept the old parent")
	}
}
