package daemon

import (
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
	}
	for _, tc := range tests {
		got, err := cookieExpiration(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("cookieExpiration(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
