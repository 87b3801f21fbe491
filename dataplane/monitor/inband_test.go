package monitor

import (
	"strings"
	"testing"
	"time"
)

// TestInbandAdaptive: an inband monitor with adaptive settings counts a
// failure for each answer over adaptive-limit or diverging from the mean
// of the member's earlier answers within the sampling timespan by more
// than the divergence (percent or ms), so a member that slows down is
// marked down after failures of them; a member slow from the start has
// no baseline to diverge from, and quick answers never fail. The answer
// times are given, not waited for.
func TestInbandAdaptive(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		adaptive Adaptive
		respTime time.Duration // response-time; 0: none
		answers  []time.Duration
		down     bool
		why      string // in the down state's error
	}{
		{name: "absolute, slows down", adaptive: Adaptive{Divergence: 100, Limit: 5000 * ms, Timespan: time.Minute},
			answers: []time.Duration{10 * ms, 12 * ms, 11 * ms, 300 * ms, 300 * ms}, down: true, why: "diverges from the mean of 11 ms by more than 100 ms"},
		{name: "absolute, within the divergence", adaptive: Adaptive{Divergence: 100, Limit: 5000 * ms, Timespan: time.Minute},
			answers: []time.Duration{10 * ms, 12 * ms, 100 * ms, 105 * ms, 90 * ms}},
		{name: "relative, slows down", adaptive: Adaptive{Relative: true, Divergence: 50, Limit: 5000 * ms, Timespan: time.Minute},
			answers: []time.Duration{100 * ms, 100 * ms, 100 * ms, 151 * ms, 160 * ms}, down: true, why: "by more than 50 %"},
		{name: "relative, within the divergence", adaptive: Adaptive{Relative: true, Divergence: 50, Limit: 5000 * ms, Timespan: time.Minute},
			answers: []time.Duration{100 * ms, 100 * ms, 140 * ms, 149 * ms, 120 * ms}},
		{name: "the limit, without a baseline", adaptive: Adaptive{Divergence: 100000, Limit: 200 * ms, Timespan: time.Minute},
			answers: []time.Duration{250 * ms, 300 * ms}, down: true, why: "exceeds the adaptive limit of 200 ms"},
		{name: "slow from the start, no limit", adaptive: Adaptive{Divergence: 10, Timespan: time.Minute},
			answers: []time.Duration{900 * ms, 905 * ms, 902 * ms, 908 * ms}},
		{name: "the baseline left the timespan", adaptive: Adaptive{Divergence: 100, Limit: 5000 * ms, Timespan: 2 * time.Second},
			// 1 s apart: the quick answers are out of the 2 s window
			// before the slow ones come, after the first slow one.
			answers: []time.Duration{10 * ms, 10 * ms, 0, 0, 400 * ms, 400 * ms, 400 * ms}},
		{name: "response-time first", adaptive: Adaptive{Divergence: 100, Limit: 5000 * ms, Timespan: time.Minute}, respTime: time.Second,
			answers: []time.Duration{10 * ms, 1500 * ms, 1500 * ms}, down: true, why: "exceeds the response-time of 1000 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.adaptive
			var last State
			p := NewPassive(&Spec{Type: Inband, Adaptive: &a,
				Inband: &InbandLimits{Failures: 2, FailureInterval: time.Minute, ResponseTime: tc.respTime}}, func(s State) { last = s })
			defer p.Stop()
			c := p.Clock()
			if c == nil {
				t.Fatal("no clock")
			}
			at := time.Now().Add(-time.Hour).UnixNano()
			for _, rt := range tc.answers {
				at += int64(time.Second)
				if rt == 0 { // a pause: no request
					continue
				}
				c.Sent(at)
				c.Answered(at + int64(rt))
			}
			c.Stop()
			st := p.State()
			if got := st.Status == Down; got != tc.down {
				t.Fatalf("down %v, want %v (%+v)", got, tc.down, st)
			}
			if tc.down && (!strings.Contains(st.LastError, "2 failures within 1m0s") || !strings.Contains(st.LastError, tc.why) || last.Status != Down) {
				t.Fatalf("the down state %+v (reported %+v), want %q", st, last, tc.why)
			}
		})
	}
	// Adaptive alone gives a clock; neither response-time nor adaptive
	// gives none.
	if NewPassive(&Spec{Type: Inband, Adaptive: &Adaptive{Divergence: 25, Timespan: time.Minute},
		Inband: &InbandLimits{Failures: 3, FailureInterval: time.Second}}, nil).Clock() == nil {
		t.Fatal("no clock with adaptive settings")
	}
}
