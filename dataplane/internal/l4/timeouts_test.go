package l4

import (
	"testing"
	"time"
)

func TestTimeoutPolicy(t *testing.T) {
	for _, c := range []struct {
		profile, want time.Duration
	}{{0, 300 * time.Second}, {-1, 0}, {5 * time.Second, 5 * time.Second}} {
		if got := IdleTimeout(c.profile); got != c.want {
			t.Errorf("IdleTimeout(%v) = %v, want %v", c.profile, got, c.want)
		}
	}
	const s = int64(time.Second)
	for _, c := range []struct {
		idle      time.Duration
		last, now int64
		want      bool
	}{
		{10 * time.Second, 100 * s, 109 * s, false},
		{10 * time.Second, 100 * s, 110 * s, true},
		{10 * time.Second, 105 * s, 110 * s, false}, // a byte at 105 s restarted it
		{0, 0, 1 << 62, false},                      // indefinite
	} {
		if got := idleExpired(c.idle, c.last, c.now); got != c.want {
			t.Errorf("idleExpired(%v, %d, %d) = %v", c.idle, c.last, c.now, got)
		}
		if c.idle > 0 {
			if d := idleDeadline(c.idle, c.last); d.UnixNano() != c.last+int64(c.idle) {
				t.Errorf("idleDeadline(%v, %d) = %v", c.idle, c.last, d)
			}
		}
	}
	if connectExpired(5*time.Second, 0, 4*s) || !connectExpired(5*time.Second, 0, 5*s) {
		t.Error("a connect is given up exactly at its timeout")
	}
}
