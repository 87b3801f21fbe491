package state

import (
	"testing"
	"time"
)

// A member's slow ramp gives the share of the elapsed time, and once over
// it forgets its start so that Pick stops reading the clock for it.
func TestMemberRamp(t *testing.T) {
	const rampTime = 10 * time.Second
	base := time.Unix(1000, 0).UnixNano()
	cases := []struct {
		name      string
		start     int64
		now       int64
		want      float64
		wantStart int64
	}{
		{"never came up again", 0, base, 1, 0},
		{"just up", base, base, 0.01, base},
		{"half way", base, base + int64(rampTime/2), 0.5, base},
		{"over", base, base + int64(rampTime), 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &Member{}
			m.RampStart.Store(c.start)
			if got := m.ramp(c.now, rampTime); got != c.want {
				t.Errorf("ramp = %v, want %v", got, c.want)
			}
			if got := m.RampStart.Load(); got != c.wantStart {
				t.Errorf("RampStart = %d, want %d", got, c.wantStart)
			}
		})
	}
}
