package bwc

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestEffectiveWeights: a level the group leaves out shares as the
// nearest listed level below it, or the lowest listed one.
func TestEffectiveWeights(t *testing.T) {
	for _, c := range []struct {
		name   string
		listed [Levels]int
		want   [Levels]int
	}{
		{"two levels", [Levels]int{2: 20, 6: 80}, [Levels]int{20, 20, 20, 20, 20, 20, 80, 80}},
		{"every level", [Levels]int{1, 2, 3, 4, 5, 6, 7, 8}, [Levels]int{1, 2, 3, 4, 5, 6, 7, 8}},
		{"level 0 only", [Levels]int{0: 5}, [Levels]int{5, 5, 5, 5, 5, 5, 5, 5}},
	} {
		if got := effectiveWeights(c.listed); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLevel: BWC::priority's level is a number 0 to 7 or a name of the
// policy's priority group.
func TestLevel(t *testing.T) {
	grouped := newPolicy(config.BWCPolicy{Name: "/Common/g", MaxRate: 8e6,
		Priority: &config.BWCPriorityGroup{Name: "/Common/pg", Weights: [Levels]int{1: 10, 6: 90}, Levels: map[string]int{"bulk": 1, "video": 6}}})
	plain := newPolicy(config.BWCPolicy{Name: "/Common/p", MaxRate: 8e6})
	for _, c := range []struct {
		p    *Policy
		in   string
		want int
		ok   bool
	}{
		{grouped, "video", 6, true}, {grouped, "bulk", 1, true}, {grouped, "3", 3, true},
		{grouped, "audio", 0, false}, {grouped, "8", 0, false}, {plain, "7", 7, true},
		{plain, "video", 0, false}, {plain, "-1", 0, false},
	} {
		got, err := c.p.Level(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: Level(%q) = %d, %v; want %d, ok %v", c.p.Cfg.Name, c.in, got, err, c.want, c.ok)
		}
	}
	if grouped.shares == nil || plain.shares != nil {
		t.Error("shares made for the wrong policy")
	}
}

// TestSharesByWeight: two levels writing as fast as their policy lets
// them pass in the ratio of their weights; a level alone takes the whole
// rate. The ratio is compared loosely (bounded time, no absolute rate).
func TestSharesByWeight(t *testing.T) {
	const rateBps = 8e6 // 1 MB/s
	p := newPolicy(config.BWCPolicy{Name: "/Common/g", MaxRate: rateBps,
		Priority: &config.BWCPriorityGroup{Name: "/Common/pg", Weights: [Levels]int{0: 20, 7: 80}, Levels: map[string]int{"lo": 0, "hi": 7}}})
	var got [2]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, level := range []int{7, 0} {
		b := p.Attach("")
		b.SetLevel(level)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				b.Wait(16 << 10)
				got[i].Add(16 << 10)
			}
		})
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	hi, lo := got[0].Load(), got[1].Load()
	t.Logf("hi %d lo %d", hi, lo)
	if hi < 2*lo {
		t.Errorf("level 7 (weight 80) passed %d bytes, level 0 (weight 20) %d: want at least twice as much", hi, lo)
	}
	if lo == 0 {
		t.Error("level 0 passed nothing: a weight is a share, not a wait")
	}
}
