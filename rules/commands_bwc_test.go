package rules

import "testing"

func TestParseBitRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"10mbps", 10e6, true}, {"512kbps", 512e3, true}, {"1gbps", 1e9, true}, {"800bps", 800, true},
		{"2000", 2000, true}, {"0", 0, true}, {"2MBPS", 2e6, true},
		{"2furlongs", 0, false}, {"mbps", 0, false}, {"-1mbps", 0, false}, {"99999999999999999999gbps", 0, false},
	} {
		got, ok := ParseBitRate(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
