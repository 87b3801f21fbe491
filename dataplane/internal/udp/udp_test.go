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

func TestIdleAt(t *testing.T) {
	const s = int64(time.Second)
	tick := int64(200 * time.Millisecond)
	for _, c := range []struct {
		name          string
		last, prev, n int64
		to            time.Duration
		want          bool
	}{
		{"on time, idle past", 10 * s, 11*s + tick, 11*s + 2*tick, time.Second, true},
		{"on time, active", 11 * s, 11 * s, 11*s + tick, time.Second, false},
		{"never", 0, 100 * s, 101 * s, 0, false},
		// The tick ran 1.3 s late: a datagram of the last interval was
		// stamped with prev, 1.3 s before n, and is not idle.
		{"late tick, stamped in the last interval", 10 * s, 10 * s, 11*s + 3*tick/2, time.Second, false},
		{"late tick, idle before it", 8 * s, 10 * s, 11*s + 3*tick/2, time.Second, true},
	} {
		if got := idleAt(c.last, c.prev, c.n, c.to); got != c.want {
			t.Errorf("%s: idleAt(%d, %d, %d, %v) = %v, want %v", c.name, c.last, c.prev, c.n, c.to, got, c.want)
		}
	}
}

// A flow is left alone by the idle sweep while it opens (published, its
// first datagram not through) and while its goroutine runs an event.
func TestSweepable(t *testing.T) {
	f := &flow{}
	f.opening.Store(true)
	if f.sweepable() {
		t.Error("an opening flow is sweepable")
	}
	f.opening.Store(false)
	if !f.sweepable() {
		t.Error("an open flow is not sweepable")
	}
	f.wq = &waitQueue{}
	f.wq.busy.Store(true)
	if f.sweepable() {
		t.Error("a flow running an event is sweepable")
	}
}
