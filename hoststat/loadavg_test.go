package hoststat

import (
	"math"
	"testing"
	"time"
)

// TestLoadAverages: the first figure seeds every window; a change of
// load moves the 5-second average most and the 5-minute one least, by
// the exact exponential decay of the time elapsed; readings that go
// back are ignored.
func TestLoadAverages(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type reading struct {
		cpu time.Duration
		at  time.Duration
	}
	for _, tc := range []struct {
		name     string
		readings []reading
		want     [3]float64
	}{
		{"one reading", []reading{{0, 0}}, [3]float64{0, 0, 0}},
		{"seeded", []reading{{0, 0}, {500 * time.Millisecond, time.Second}}, [3]float64{50, 50, 50}},
		{"busier", []reading{{0, 0}, {0, time.Second}, {time.Second, 2 * time.Second}},
			[3]float64{100 * (1 - math.Exp(-1.0/5)), 100 * (1 - math.Exp(-1.0/60)), 100 * (1 - math.Exp(-1.0/300))}},
		{"clock back", []reading{{0, 0}, {time.Second, time.Second}, {2 * time.Second, 0}}, [3]float64{100, 100, 100}},
	} {
		i := 0
		l := &LoadAverages{Procs: 1, Read: func() (time.Duration, time.Time) {
			r := tc.readings[i]
			return r.cpu, t0.Add(r.at)
		}}
		for i = range tc.readings {
			l.Sample()
		}
		for k, w := range LoadWindows {
			if got := l.Usage(w); math.Abs(got-tc.want[k]) > 1e-9 {
				t.Errorf("%s: %v average %v, want %v", tc.name, w, got, tc.want[k])
			}
		}
	}
}
