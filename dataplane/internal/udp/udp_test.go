package udp

import (
	"testing"
	"time"
)

func TestIdleTimeout(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, DefaultIdleTimeout},
		{-1, 0},
		{5 * time.Second, 5 * time.Second},
	} {
		if got := IdleTimeout(c.in); got != c.want {
			t.Errorf("IdleTimeout(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
