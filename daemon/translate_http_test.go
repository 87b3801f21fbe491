package daemon

import (
	"math"
	"testing"
	"time"
)

func TestCookieExpiration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"0", 0, false},
		{"", 0, false},
		{"3600", time.Hour, false},
		{"1:0:0", time.Hour, false},
		{"1:2:3:4", 24*time.Hour + 2*time.Hour + 3*time.Minute + 4*time.Second, false},
		{"1:2:3:4:5", 0, true},
		{"soon", 0, true},
		{"-5", 0, true},
		// Past a 32-bit count of seconds: that count, not a wrapped one.
		{"9223372036854775807", math.MaxUint32 * time.Second, false},
		{"4294967295:0:0:0", math.MaxUint32 * time.Second, false},
	}
	for _, tc := range tests {
		got, err := cookieExpiration(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("cookieExpiration(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// TestSecondsSaturate: a count of seconds past 32 bits reads as the
// largest 32-bit count; before, 2^63-1 seconds wrapped to a negative
// duration.
func TestSecondsSaturate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"5", 5 * time.Second},
		{"4294967295", math.MaxUint32 * time.Second},
		{"4294967296", math.MaxUint32 * time.Second},
		{"9223372036854775807", math.MaxUint32 * time.Second},
		{"99999999999999999999", math.MaxUint32 * time.Second},
	} {
		if got := seconds(tc.in); got != tc.want {
			t.Errorf("seconds(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
