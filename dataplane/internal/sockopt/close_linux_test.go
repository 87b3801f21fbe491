//go:build linux

package sockopt

import (
	"testing"
	"time"
)

// TestApplyCloseReadsBack sets time-wait-timeout 0 (SO_LINGER 0) and the
// retransmission bound (TCP_USER_TIMEOUT) on a real socket and reads them
// back; a side without them leaves both as the kernel made them.
func TestApplyCloseReadsBack(t *testing.T) {
	cases := []struct {
		name     string
		side     *Side
		noLinger bool
		userMS   int
	}{
		{"linger 0", &Side{NoLinger: true}, true, 0},
		{"user timeout", &Side{UserTimeout: 2500 * time.Millisecond}, false, 2500},
		{"both", &Side{NoLinger: true, UserTimeout: time.Second}, true, 1000},
		{"untouched", &Side{}, false, 0},
		{"nil", nil, false, 0},
	}
	// TestApplyCloseReadsBack's proxy buffer: TCP_NOTSENT_LOWAT.
	fd := socket(t)
	(&Side{NotSentLowat: 32768}).Apply(fd)
	if r, err := Read(fd); err != nil || r.NotSentLowat != 32768 {
		t.Errorf("proxy-buffer-high: TCP_NOTSENT_LOWAT %d (%v), want 32768", r.NotSentLowat, err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fd := socket(t)
			tc.side.Apply(fd)
			r, err := Read(fd)
			if err != nil {
				t.Fatal(err)
			}
			if r.NoLinger != tc.noLinger || r.UserTimeout != tc.userMS {
				t.Errorf("linger 0 %v, user timeout %d ms; want %v, %d ms", r.NoLinger, r.UserTimeout, tc.noLinger, tc.userMS)
			}
		})
	}
}

// TestUserTimeout: max-retrans retransmissions from minimum-rto, each
// timeout twice the last up to Linux's 120 s, added up.
func TestUserTimeout(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		retrans int
		minRTO  time.Duration
		want    time.Duration
	}{
		{0, 1000 * ms, 1000 * ms},
		{3, 200 * ms, 3000 * ms},
		{8, 1000 * ms, 367 * time.Second}, // 1+2+4+...+64, then 120 twice
		{10, 30 * time.Second, 30*time.Second + 60*time.Second + 9*120*time.Second},
		{3, 0, 0},
		{-1, 1000 * ms, 0},
	}
	for _, tc := range cases {
		if got := UserTimeout(tc.retrans, tc.minRTO); got != tc.want {
			t.Errorf("UserTimeout(%d, %v) = %v, want %v", tc.retrans, tc.minRTO, got, tc.want)
		}
	}
}
