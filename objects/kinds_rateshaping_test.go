package objects

import "testing"

func TestValidBitRate(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"0", true}, {"296", true}, {"10mbps", true}, {"10MBPS", true}, {"512kbps", true},
		{"1gbps", true}, {"300bps", true},
		{"", false}, {"mbps", false}, {"10 mbps", false}, {"1.5mbps", false}, {"-1", false},
		{"+1", false}, {"10mbit", false}, {"2furlongs", false},
	} {
		if got := validBitRate(tc.s); got != tc.ok {
			t.Errorf("validBitRate(%q) = %v, want %v", tc.s, got, tc.ok)
		}
	}
}
