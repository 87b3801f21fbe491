package rstcause

import (
	"testing"
	"time"
)

// TestRefuse: each second allows the reject rate's resets and no more; a
// second over it has its 011e0001 line with the second's count; no limit
// allows every reset; a nil Log too.
func TestRefuse(t *testing.T) {
	cases := []struct {
		name    string
		max     int64
		seconds []int // refusals in each second
		resets  []int // resets allowed in each
		lines   []string
	}{
		{"default", 250, []int{300, 10}, []int{250, 10}, []string{"011e0001:4: Limiting open port RST response from 300 to 250 packets/sec"}},
		{"none", 0, []int{3}, []int{0}, []string{"011e0001:4: Limiting open port RST response from 3 to 0 packets/sec"}},
		{"under", 5, []int{5, 5}, []int{5, 5}, nil},
		{"unlimited", -1, []int{1000}, []int{1000}, nil},
	}
	defer func(f func() int64, g func(time.Duration, func())) { unixNow, afterFunc = f, g }(unixNow, afterFunc)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := make(chan string, 10)
			var l Log
			l.SetRejectRate(tc.max, func(s string) { lines <- s })
			sec := int64(1000)
			unixNow = func() int64 { return sec }
			var ends []func() // the reports due when a second ends
			afterFunc = func(_ time.Duration, f func()) { ends = append(ends, f) }
			for i, n := range tc.seconds {
				sec++
				got := 0
				for range n {
					if l.Refuse() {
						got++
					}
				}
				for _, f := range ends {
					f()
				}
				ends = nil
				if got != tc.resets[i] {
					t.Errorf("second %d: %d resets of %d refusals, want %d", i, got, n, tc.resets[i])
				}
			}
			for _, want := range tc.lines {
				select {
				case got := <-lines:
					if got != want {
						t.Errorf("line %q, want %q", got, want)
					}
				default:
					t.Fatalf("no line %q", want)
				}
			}
			select {
			case got := <-lines:
				t.Errorf("line %q more", got)
			default:
			}
		})
	}
	var l *Log
	if !l.Refuse() {
		t.Error("a nil Log refused a reset")
	}
}
