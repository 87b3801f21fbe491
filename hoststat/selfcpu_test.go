package hoststat

import (
	"testing"
	"time"
)

// TestCPUMeter: the figure is the process's processor time between two
// readings over the wall time between them, shared by the processors,
// and a reading is taken only once Every has passed.
func TestCPUMeter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name  string
		procs int
		reads []time.Duration // processor time at each second
		want  []float64       // Percent after each reading
	}{
		{"idle", 1, []time.Duration{0, 0, 0}, []float64{0, 0, 0}},
		{"one busy processor of two", 2, []time.Duration{0, time.Second, 2 * time.Second}, []float64{0, 50, 50}},
		{"rising then falling", 1, []time.Duration{0, 900 * time.Millisecond, 1000 * time.Millisecond}, []float64{0, 90, 10}},
		{"clamped", 1, []time.Duration{0, 3 * time.Second}, []float64{0, 100}},
		{"counter went back", 1, []time.Duration{time.Second, 0}, []float64{0, 0}},
	} {
		i := 0
		m := &CPUMeter{Procs: c.procs, Read: func() (time.Duration, time.Time) {
			r := c.reads[i]
			at := t0.Add(time.Duration(i) * time.Second)
			i++
			return r, at
		}}
		for k, w := range c.want {
			if got := m.Percent(); got != w {
				t.Errorf("%s: reading %d: %v%%, want %v%%", c.name, k, got, w)
			}
		}
	}
	// A reading is not due before Every: the figure stays, Read is not called.
	n := 0
	m := &CPUMeter{Every: time.Hour, Read: func() (time.Duration, time.Time) { n++; return 0, t0 }}
	for range 5 {
		m.Percent()
	}
	if n != 1 {
		t.Errorf("Every an hour: %d readings, want 1", n)
	}
	// The real process: some time was used, the figure is a percent.
	if d, err := SelfCPU(); err != nil || d <= 0 {
		t.Errorf("SelfCPU: %v, %v", d, err)
	}
	self := &CPUMeter{}
	if p := self.Percent(); p != 0 {
		t.Errorf("first reading: %v%%, want 0", p)
	}
	if p := self.Percent(); p < 0 || p > 100 {
		t.Errorf("second reading: %v%%", p)
	}
}
