//go:build linux

package evloop

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// holdingFor turns holding on for the test, on at least procs processors
// (a holder needs one besides those the rest of the process keeps).
func holdingFor(t *testing.T, procs int) {
	t.Helper()
	was := runtime.GOMAXPROCS(max(procs, runtime.GOMAXPROCS(0)))
	SetHolding(true)
	t.Cleanup(func() {
		SetHolding(false)
		runtime.GOMAXPROCS(was)
	})
}

// holdsSince is how many holds began since the count from (HoldsStarted);
// the package's tests run one at a time, so they are the test's loops'.
func holdsSince(from uint64) uint64 { return HoldsStarted() - from }

// TestHoldingLoopServesWithoutParking: a loop on one exchange holds its
// thread between the exchange's messages instead of parking in the
// runtime's poller, still runs its ticks and posts, parks after holdIdle
// without events (leaving the holders' count) and serves again from
// there: its descriptor is back in the runtime's poller.
func TestHoldingLoopServesWithoutParking(t *testing.T) {
	holdingFor(t, 2)
	var ticks atomic.Int32
	l := startLoop(t, 5*time.Millisecond, func(int64) { ticks.Add(1) })
	held := HoldsStarted()
	fd := echoPair(t, l)
	exchange(t, fd)
	before := sleepsOf(l)
	t0 := ticks.Load()
	const rounds = 20
	start := time.Now()
	for i := 0; i < rounds; i++ {
		exchange(t, fd)
		time.Sleep(time.Millisecond)
	}
	// Each sleepsOf is one more wake-up of its own; a loop
	// parking between exchanges sleeps once per round. On a busy machine
	// a round may outlast holdIdle, and the loop then parks once.
	slept := sleepsOf(l) - before
	maxSlept := 3 + int(time.Since(start)/holdIdle)
	if slept > maxSlept {
		t.Errorf("a holding loop parked %d times over %d exchanges, want at most %d", slept, rounds, maxSlept)
	}
	if holdsSince(held) == 0 {
		t.Error("the loop never held its thread")
	}
	waitFor(t, "a tick while holding", func() bool { return ticks.Load() > t0 })
	waitFor(t, "the loop to park after holdIdle", func() bool { return holders.n.Load() == 0 })
	exchange(t, fd)
	ran := false
	if !l.Call(func() { ran = true }) || !ran {
		t.Fatal("a post did not run after the loop parked")
	}
}

// TestHoldingLoopStops: Stop reaches a loop while it holds.
func TestHoldingLoopStops(t *testing.T) {
	holdingFor(t, 2)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	held := HoldsStarted()
	go l.Run(0, nil)
	fd := echoPair(t, l)
	exchange(t, fd)
	waitFor(t, "the loop to hold", func() bool { return holders.n.Load() > 0 || holdsSince(held) > 0 })
	stopped := make(chan struct{})
	go func() { l.Stop(true); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop took over 2 s on a holding loop")
	}
	if n := holders.n.Load(); n != 0 {
		t.Fatalf("%d holders after the only loop stopped", n)
	}
}

// TestHoldersLeaveAProcessor: loops hold on all the processors but one
// (and some do), and not at all on one; the others park as before and
// serve all the same.
func TestHoldersLeaveAProcessor(t *testing.T) {
	for _, procs := range []int{1, 2} {
		holdingFor(t, 1)
		was := runtime.GOMAXPROCS(procs)
		held := HoldsStarted()
		ls := make([]*Loop, 3)
		fds := make([]int, len(ls))
		for i := range ls {
			ls[i] = startLoop(t, 0, nil)
			fds[i] = echoPair(t, ls[i])
		}
		most := int32(0)
		for r := 0; r < 50; r++ {
			for _, fd := range fds {
				exchange(t, fd)
				most = max(most, holders.n.Load())
			}
		}
		for _, l := range ls {
			l.Stop(true)
		}
		runtime.GOMAXPROCS(was)
		if most > int32(procs-1) {
			t.Errorf("on %d processors %d loops held at once, want at most %d", procs, most, procs-1)
		}
		if n := holdsSince(held); (n > 0) != (procs > 1) {
			t.Errorf("on %d processors loops began %d holds, want some on more than one and none on one", procs, n)
		}
	}
}

func TestOneExchangeEach(t *testing.T) {
	for _, tc := range []struct {
		s    procSignals
		want bool
	}{
		{procSignals{loops: 2, peak: 2}, true},  // two keep-alive connections, a loop each
		{procSignals{loops: 2, peak: 1}, true},  // one side quiet this window
		{procSignals{loops: 1, peak: 2}, false}, // one loop: the judge decides
		{procSignals{loops: 2, peak: 3}, false}, // a loop with more than one exchange
		{procSignals{loops: 2, peak: 4}, false},
		{procSignals{loops: 0, peak: 0}, false},
	} {
		if got := tc.s.oneEach(); got != tc.want {
			t.Errorf("%+v: oneEach %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestLoopsOnOneExchangeEachHold: under the governor with polling judged
// (ltmd's default), two loops serving one exchange each hold their
// threads instead of busy-polling, and poll again when a loop takes a
// second exchange.
func TestLoopsOnOneExchangeEachHold(t *testing.T) {
	was := runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))) // two holders and a processor to spare
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	var ls [2]*Loop
	var fds [2]int
	for i := range ls {
		l := startPolling(t)
		ls[i], fds[i] = l, echoPair(t, l)
	}
	Govern(Governed{Polling: true})
	t.Cleanup(StopGoverning)
	held := HoldsStarted()
	// Both loops busy until the governor has seen a window of them and
	// they held: at most 10 s.
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() { // the second loop's exchange, alongside
		defer close(errs)
		b := []byte{'y'}
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := unix.Write(fds[1], b); err != nil {
				errs <- err
				return
			}
			if _, err := unix.Read(fds[1], b); err != nil {
				errs <- err
				return
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for holdsSince(held) == 0 && time.Now().Before(deadline) {
		exchange(t, fds[0])
	}
	if holdsSince(held) == 0 {
		close(done)
		t.Fatal("two loops on one exchange each never held their threads")
	}
	if !holdOne.Load() {
		t.Error("the governor did not mark the loops as one exchange each")
	}
	// More exchanges on the first loop (a test's exchange is one
	// registration, a proxied one two): no longer one each, so the loops
	// poll again once the governor has seen a window of it.
	fd2, fd3 := echoPair(t, ls[0]), echoPair(t, ls[0])
	spins := onLoop(ls[0], func() int { return ls[0].spins })
	deadline = time.Now().Add(10 * time.Second)
	for (holdOne.Load() || onLoop(ls[0], func() int { return ls[0].spins }) == spins) && time.Now().Before(deadline) {
		exchange(t, fds[0])
		exchange(t, fd2)
		exchange(t, fd3)
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if holdOne.Load() {
		t.Fatal("two exchanges on a loop still counted as one each")
	}
	if onLoop(ls[0], func() int { return ls[0].spins }) == spins {
		t.Fatal("the loop with two exchanges never polled")
	}
}
