//go:build linux

package evloop

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recorder counts the events of one registration and can run a step on
// each.
type recorder struct {
	events atomic.Int32
	last   atomic.Uint32
	step   func(ev uint32)
}

func (r *recorder) Ready(_ uint8, ev uint32) {
	r.events.Add(1)
	r.last.Store(ev)
	if r.step != nil {
		r.step(ev)
	}
}

func startLoop(t *testing.T, tick time.Duration, onTick func(int64)) *Loop {
	t.Helper()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if onTick == nil {
		onTick = func(int64) {}
	}
	go l.Run(tick, onTick)
	t.Cleanup(func() { l.Stop(true) })
	return l
}

// startPolling runs a loop that busy-polls (never found contended, as
// this test may run on a busy machine) until the test ends.
func startPolling(t *testing.T) *Loop {
	t.Helper()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	l.SetBusyPoll(5 * time.Second)
	l.contended = time.Hour
	go l.Run(0, nil)
	t.Cleanup(func() { l.Stop(true) })
	return l
}

func socketPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestPostAndCallRunOnTheLoop(t *testing.T) {
	l := startLoop(t, 0, nil)
	var n atomic.Int32
	for i := 0; i < 100; i++ {
		l.Post(func() { n.Add(1) })
	}
	if !l.Call(func() { n.Add(1) }) {
		t.Fatal("Call reported a stopped loop")
	}
	// Posts run in order, so all of them ran before the Call's function.
	if got := n.Load(); got != 101 {
		t.Fatalf("ran %d functions, want 101", got)
	}
}

func TestLevelAndEdgeRegistrations(t *testing.T) {
	l := startLoop(t, 0, nil)
	a, b := socketPair(t)
	c, d := socketPair(t)
	level, edge := &recorder{}, &recorder{}
	// The level-triggered handler reads one byte per event; the edge one
	// reads nothing and must not be called again until new bytes arrive.
	level.step = func(uint32) { unix.Read(a, make([]byte, 1)) }
	if !l.Call(func() {
		if _, err := l.Add(a, In, level, 1); err != nil {
			t.Error(err)
		}
		if _, err := l.Add(c, In|Edge, edge, 2); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("loop stopped")
	}
	unix.Write(b, []byte("xyz"))
	unix.Write(d, []byte("xyz"))
	waitFor(t, "three level events", func() bool { return level.events.Load() >= 3 })
	time.Sleep(50 * time.Millisecond)
	if got := level.events.Load(); got != 3 {
		t.Fatalf("level-triggered handler saw %d events for 3 bytes read one by one", got)
	}
	if got := edge.events.Load(); got != 1 {
		t.Fatalf("edge-triggered handler saw %d events for one write", got)
	}
	unix.Write(d, []byte("more"))
	waitFor(t, "a second edge", func() bool { return edge.events.Load() == 2 })
}

func TestForgottenTokensAreNotDispatched(t *testing.T) {
	l := startLoop(t, 0, nil)
	a, b := socketPair(t)
	first, second := &recorder{}, &recorder{}
	var tok Token
	l.Call(func() { tok, _ = l.Add(a, In, first, 0) })
	l.Call(func() {
		l.Remove(a, tok)
		// The slot is reused at once; the old token must stay dead.
		if t2, err := l.Add(a, In, second, 0); err != nil || t2 == tok {
			t.Errorf("re-registration gave %v, %v", t2, err)
		}
		l.Again(tok)
	})
	unix.Write(b, []byte("x"))
	waitFor(t, "the new registration's event", func() bool { return second.events.Load() > 0 })
	if first.events.Load() != 0 {
		t.Fatalf("a forgotten registration got %d events", first.events.Load())
	}
}

func TestAgainGivesAnotherTurn(t *testing.T) {
	l := startLoop(t, 0, nil)
	a, _ := socketPair(t)
	r := &recorder{}
	var tok Token
	r.step = func(uint32) {
		if r.events.Load() < 5 {
			l.Again(tok)
		}
	}
	l.Call(func() { tok, _ = l.Add(a, In|Edge, r, 0); l.Again(tok) })
	waitFor(t, "five turns", func() bool { return r.events.Load() == 5 })
	time.Sleep(30 * time.Millisecond)
	if got := r.events.Load(); got != 5 {
		t.Fatalf("%d turns, want 5", got)
	}
	if r.last.Load() != In {
		t.Fatalf("a turn from Again carries %#x, want In", r.last.Load())
	}
}

func TestTicksRunWhileIdle(t *testing.T) {
	var ticks atomic.Int32
	startLoop(t, 20*time.Millisecond, func(int64) { ticks.Add(1) })
	waitFor(t, "three ticks", func() bool { return ticks.Load() >= 3 })
}

func TestStopWithoutRun(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	l.Stop(false)
	l.Post(func() { t.Error("ran after Stop") }) // dropped, not queued
	if len(l.posted) != 0 {
		t.Fatal("Post queued work on a stopped loop")
	}
}

func TestCallAfterStopReportsFalse(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	go l.Run(0, nil)
	l.Stop(true)
	done := make(chan bool, 1)
	go func() { done <- l.Call(func() { t.Error("ran after Stop") }) }()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("Call reported success on a stopped loop")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call on a stopped loop hung")
	}
}

// echoPair registers one end of a socket pair in l with a handler that
// writes back what it reads, and returns the other end, blocking.
func echoPair(tb testing.TB, l *Loop) int {
	tb.Helper()
	return echoPairWith(tb, l, nil)
}

// echoPairWith is echoPair whose handler also calls also (if not nil)
// after each echo, on the loop.
func echoPairWith(tb testing.TB, l *Loop, also func()) int {
	tb.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := unix.SetNonblock(fds[0], true); err != nil {
		tb.Fatal(err)
	}
	e := &recorder{}
	buf := make([]byte, 64)
	e.step = func(uint32) {
		if n, err := unix.Read(fds[0], buf); err == nil && n > 0 {
			unix.Write(fds[0], buf[:n])
		}
		if also != nil {
			also()
		}
	}
	l.Call(func() {
		if _, err := l.Add(fds[0], In, e, 0); err != nil {
			tb.Error(err)
		}
	})
	return fds[1]
}

// exchange sends one byte through the echo and waits for it back.
func exchange(tb testing.TB, fd int) {
	b := []byte{'x'}
	if _, err := unix.Write(fd, b); err != nil {
		tb.Fatal(err)
	}
	if n, err := unix.Read(fd, b); err != nil || n != 1 {
		tb.Fatalf("echo read %d, %v", n, err)
	}
}

// onLoop is f's answer, asked on the loop.
func onLoop(l *Loop, f func() int) int {
	var n int
	l.Call(func() { n = f() })
	return n
}

func sleepsOf(l *Loop) int { return onLoop(l, func() int { return l.sleeps }) }

func TestBusyPollKeepsPollingBetweenExchanges(t *testing.T) {
	for _, tc := range []struct {
		spin time.Duration
		// contended is the yield that tells a contended CPU: an hour
		// never (this test runs on busy machines too), 0 every yield.
		contended time.Duration
		minSleeps int // over ten exchanges 5 ms apart
		maxSleeps int
		maxSpins  int
	}{
		{0, time.Hour, 10, 1000, 0},
		{5 * time.Second, time.Hour, 0, 2, 1000},
		// Found contended (contended 0: quietAt set before the run, as
		// busyPoll does; TestContendedYieldsStopThePolling), the loop
		// sleeps after every exchange and does not poll again for the
		// back-off.
		{5 * time.Second, 0, 5, 1000, 0},
	} {
		l, err := New()
		if err != nil {
			t.Fatal(err)
		}
		l.SetBusyPoll(tc.spin)
		l.contended = tc.contended
		if tc.contended == 0 {
			l.quietAt = time.Now().Add(time.Hour).UnixNano()
		}
		go l.Run(0, nil)
		fd := echoPair(t, l)
		before := sleepsOf(l)
		var spins0 int
		l.Call(func() { spins0 = l.spins })
		start := time.Now()
		for i := 0; i < 10; i++ {
			exchange(t, fd)
			time.Sleep(5 * time.Millisecond)
		}
		var spins int
		l.Call(func() { spins = l.spins - spins0 })
		if spins > tc.maxSpins && time.Since(start) < contendedBackoff {
			t.Errorf("busy-poll %v, contended after %v: the loop polled %d times over 10 exchanges, want at most %d",
				tc.spin, tc.contended, spins, tc.maxSpins)
		}
		// Each Call is one more wake-up: sleepsOf's own adds at most one.
		slept := sleepsOf(l) - before
		if slept < tc.minSleeps || slept > tc.maxSleeps {
			t.Errorf("busy-poll %v, contended after %v: the loop slept %d times over 10 exchanges, want %d..%d",
				tc.spin, tc.contended, slept, tc.minSleeps, tc.maxSleeps)
		}
		// A spinning loop still stops at once.
		stopped := make(chan struct{})
		go func() { l.Stop(true); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(2 * time.Second):
			t.Fatalf("busy-poll %v: Stop took over 2 s", tc.spin)
		}
	}
}

// A loop whose yields are all slow and after which none of its events
// came stops polling after contendedYields of them and stays quiet for
// the back-off. (Driven directly: with exchanges on a loaded machine a
// yield may take longer than the gap between two events, which then
// rightly keeps the loop polling.)
func TestContendedYieldsStopThePolling(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop(false)
	l.contended = 0 // every yield is slow
	start := time.Now()
	if n := l.busyPoll(start.Add(time.Minute)); n != 0 {
		t.Fatalf("busyPoll found %d events on an empty set", n)
	}
	if l.quietAt < start.Add(contendedBackoff).UnixNano() {
		t.Fatalf("quiet until %v, want at least the back-off (%v) after the start", time.Unix(0, l.quietAt), contendedBackoff)
	}
}

func TestBusyPollLetsTicksRun(t *testing.T) {
	var ticks atomic.Int32
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	l.SetBusyPoll(time.Second)
	go l.Run(10*time.Millisecond, func(int64) { ticks.Add(1) })
	t.Cleanup(func() { l.Stop(true) })
	fd := echoPair(t, l)
	exchange(t, fd) // the loop polls for a second from here
	waitFor(t, "ticks after the spin", func() bool { return ticks.Load() >= 3 })
}

// BenchmarkExchange is one round trip through a loop's echo handler from
// a blocking client: the latency busy polling is for.
func BenchmarkExchange(b *testing.B) {
	for _, spin := range []time.Duration{0, 200 * time.Microsecond} {
		b.Run("busy-poll="+spin.String(), func(b *testing.B) {
			l, err := New()
			if err != nil {
				b.Fatal(err)
			}
			l.SetBusyPoll(spin)
			go l.Run(0, nil)
			defer l.Stop(true)
			fd := echoPair(b, l)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				exchange(b, fd)
			}
		})
	}
}

func TestSpinGateBoundsPollers(t *testing.T) {
	var g spinGate
	first, second := g.enter(2), g.enter(2)
	if !first || !second {
		t.Fatal("the first two pollers were refused")
	}
	if g.enter(2) {
		t.Fatal("a third poller got in under a limit of two")
	}
	g.leave()
	if !g.enter(2) {
		t.Fatal("a poller was refused after one left")
	}
	g.leave()
	g.leave()
	if got := g.n.Load(); got != 0 {
		t.Fatalf("gate holds %d after everyone left", got)
	}
}

// flushCount records when the first deferred flush ran: how many Ready
// calls of its batch had run by then.
type flushCount struct {
	ready   *atomic.Int32
	flushes atomic.Int32
	seen    atomic.Int32
}

func (f *flushCount) Flush() {
	if f.flushes.Add(1) == 1 {
		f.seen.Store(f.ready.Load())
	}
}

func TestDeferRunsAfterTheBatch(t *testing.T) {
	l := startLoop(t, 0, nil)
	var ready atomic.Int32
	f := &flushCount{ready: &ready}
	const n = 3
	var ends []int
	for i := 0; i < n; i++ {
		a, b := socketPair(t)
		ends = append(ends, b)
		r := &recorder{}
		r.step = func(uint32) {
			ready.Add(1)
			l.Defer(f)
			buf := make([]byte, 16)
			unix.Read(a, buf)
		}
		l.Call(func() {
			if _, err := l.Add(a, In, r, 0); err != nil {
				t.Error(err)
			}
		})
	}
	// All three sockets are readable before the loop looks again: one
	// batch, three Ready calls, then the deferred flushes.
	l.Call(func() {
		for _, b := range ends {
			unix.Write(b, []byte("x"))
		}
	})
	waitFor(t, "three flushes", func() bool { return f.flushes.Load() == n })
	if got := f.seen.Load(); got != n {
		t.Fatalf("the first flush ran after %d of the batch's %d events, want all", got, n)
	}
	// A flush deferred from within a flush runs before the loop waits.
	var again atomic.Int32
	l.Call(func() {
		l.Defer(flushFunc(func() { l.Defer(flushFunc(func() { again.Add(1) })) }))
	})
	waitFor(t, "the nested flush", func() bool { return again.Load() == 1 })
}

type flushFunc func()

func (f flushFunc) Flush() { f() }

// TestBusyPollOnlyWhileFewAreActive: with more registrations active than
// spinMaxActive the loop sleeps between bursts however long its polling
// time, as it would without polling; and a loop that would hold its
// thread instead (hold.go) leaves the hold and sleeps likewise.
func TestBusyPollOnlyWhileFewAreActive(t *testing.T) {
	for _, holds := range []bool{false, true} {
		t.Run(map[bool]string{false: "polling", true: "holding"}[holds], func(t *testing.T) {
			if holds {
				holdingFor(t, 2)
			}
			l := startPolling(t) // the activity rule alone, even on a busy machine
			var fds []int
			for i := 0; i < 4*spinMaxActive; i++ {
				fds = append(fds, echoPair(t, l))
			}
			before := sleepsOf(l)
			const rounds = 10
			for i := 0; i < rounds; i++ {
				// A burst: every connection has an event within microseconds.
				burst(t, fds)
				time.Sleep(5 * time.Millisecond)
			}
			// A round that starts a window with few connections counted may be
			// polled through (the first one always is); most must sleep. Polling
			// regardless of activity, the loop sleeps 0 times here.
			if slept := sleepsOf(l) - before; slept < rounds/2 {
				t.Errorf("the loop slept %d times over %d rounds on %d connections, want at least %d",
					slept, rounds, len(fds), rounds/2)
			}
		})
	}
}

// parkedAll waits until n loops have gone to the runtime's poller (not
// merely between two polls).
func parkedAll(t testing.TB, n int) {
	for i := 0; i < 200; i++ {
		if parkedNow() >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("loops never parked (%d parked)", parkedNow())
}

// longTurns registers on l a socket whose handler works for a while at
// each turn and asks for 4 more turns: the loop stays busy for about a
// millisecond per byte written to the returned descriptor.
func longTurns(t *testing.T, l *Loop) int {
	a, b := socketPair(t)
	r := &recorder{}
	var tok Token
	turns := 0
	var one [1]byte
	r.step = func(uint32) {
		unix.Read(a, one[:])
		for end := time.Now().Add(200 * time.Microsecond); time.Now().Before(end); {
		}
		if turns++; turns%5 != 0 {
			l.Again(tok)
		}
	}
	l.Call(func() {
		var err error
		if tok, err = l.Add(a, In|Edge, r, 0); err != nil {
			t.Error(err)
		}
	})
	return b
}

func TestLongRunningLoopNudgesForAParkedOne(t *testing.T) {
	a := startLoop(t, 0, nil)
	b := startLoop(t, 0, nil)
	fa := echoPair(t, a)
	fb := longTurns(t, b)
	parkedAll(t, 2)
	time.Sleep(5 * stallAfter) // a has been parked long enough to look stalled
	before := nudgesSent.Load()
	unix.Write(fb, []byte{1}) // b wakes and stays busy while a is parked
	waitFor(t, "a nudge", func() bool { return nudgesSent.Load() > before })
	exchange(t, fa)

	// A loop that answers and parks again at once needs no nudge: its
	// thread polls on its way to sleep. (Nor would a busy one for a loop
	// parked only briefly.)
	parkedAll(t, 2)
	before = nudgesSent.Load()
	for i := 0; i < 10; i++ {
		exchange(t, fa)
	}
	if n := nudgesSent.Load() - before; n >= 10 {
		t.Fatalf("%d nudges for 10 short exchanges", n)
	}
}

// A loop back from the runtime's poller does not ask the parked loops
// whether their events have come until it has run for lookEvery: the
// thread that polled for it readied every loop whose events were there,
// and a loop that parks again sooner polls on its way. So short turns
// between parks make no poll(2) of other loops' descriptors.
func TestShortTurnsDoNotLook(t *testing.T) {
	a := startLoop(t, 0, nil)
	startLoop(t, 0, nil) // a parked loop it could look at
	fa := echoPair(t, a)
	parkedAll(t, 2)
	looks := func() int { return onLoop(a, func() int { return a.looks }) }
	before := looks()
	const turns = 20
	for i := 0; i < turns; i++ {
		time.Sleep(4 * lookEvery) // a look would be due by the clock alone
		exchange(t, fa)
	}
	// A turn may outlast lookEvery on a busy machine; not most of them.
	if n := looks() - before; n >= turns/2 {
		t.Fatalf("%d looks in %d short turns", n, turns)
	}
}

// parkedNow counts the running loops waiting in the runtime's poller.
func parkedNow() int {
	n := 0
	for _, l := range *running.ls.Load() {
		if l.parkedSince.Load() != 0 {
			n++
		}
	}
	return n
}

// A running loop nudges for a parked loop whose descriptor has events
// (nobody may be polling for them), and not for one without. The parked
// loop here is never run, so that its events stay where they are.
func TestNudgeForReadyParkedLoop(t *testing.T) {
	parked, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parked.Stop(false) })
	a, b := socketPair(t)
	if _, err := parked.Add(a, In|Edge, &recorder{}, 0); err != nil {
		t.Fatal(err)
	}
	running.add(parked)
	t.Cleanup(func() { running.remove(parked) })
	now := time.Now().UnixNano()
	parked.parkedSince.Store(now - int64(10*readyAfter))
	runner := &Loop{}

	if parked.hasEvents() {
		t.Fatal("events on a quiet descriptor")
	}
	before := nudgesSent.Load()
	runner.nudgeForReady(now)
	if n := nudgesSent.Load() - before; n != 0 {
		t.Fatalf("%d nudges for a parked loop without events", n)
	}

	unix.Write(b, []byte{1})
	if !parked.hasEvents() {
		t.Fatal("no events after a write")
	}
	// The nudge goes to a goroutine that may not be receiving at this
	// instant (none is sent then): try a bounded number of times.
	for i := 0; i < 100 && nudgesSent.Load() == before; i++ {
		runner.nudgeForReady(now)
		time.Sleep(time.Millisecond)
	}
	if nudgesSent.Load() == before {
		t.Fatal("no nudge for a parked loop with events")
	}

	// Parked only briefly: its thread may still be on its way to poll.
	before = nudgesSent.Load()
	parked.parkedSince.Store(now)
	runner.nudgeForReady(now + int64(readyAfter)/2)
	if n := nudgesSent.Load() - before; n != 0 {
		t.Fatalf("%d nudges for a loop parked %v ago", n, readyAfter/2)
	}
}

// burst writes a byte to every echo connection and reads every echo back.
func burst(t *testing.T, fds []int) {
	t.Helper()
	b := []byte{'x'}
	for _, fd := range fds {
		if _, err := unix.Write(fd, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, fd := range fds {
		if n, err := unix.Read(fd, b); err != nil || n != 1 {
			t.Fatalf("echo read %d, %v", n, err)
		}
	}
}

func ownWaitsOf(l *Loop) int { return onLoop(l, func() int { return l.ownWaits }) }

// TestBusyLoopSettles: a loop with more than settleRegs active
// registrations waits for its next events in its own epoll_pwait, where
// events, posts, ticks and Stop all still reach it, also when its
// batches defer writes of their own (Defer); a loop whose batches defer
// writes to a shared socket (DeferShared) parks in the runtime's poller
// as before.
func TestBusyLoopSettles(t *testing.T) {
	for _, deferring := range []string{"plain", "own", "shared"} {
		t.Run(deferring, func(t *testing.T) {
			var ticks atomic.Int32
			l := startLoop(t, 20*time.Millisecond, func(int64) { ticks.Add(1) })
			l.contended = time.Hour
			var fds []int
			for i := 0; i < 4*settleRegs; i++ {
				var also func()
				switch deferring {
				case "own":
					// Every event of the connection leaves a write for the batch's end.
					also = func() { l.Defer(flushFunc(func() {})) }
				case "shared":
					also = func() { l.DeferShared(flushFunc(func() {})) }
				}
				fds = append(fds, echoPairWith(t, l, also))
			}
			// Bursts 2 ms apart: each closes an activity window in which
			// (on a machine not too busy) every connection had events.
			waits := 0
			for i := 0; i < 100 && (waits == 0 || i < 20); i++ {
				burst(t, fds)
				time.Sleep(2 * time.Millisecond)
				waits = ownWaitsOf(l)
			}
			if deferring == "shared" {
				if waits != 0 {
					t.Fatalf("a loop deferring shared writes waited %d times in its own epoll_pwait, want 0", waits)
				}
				return
			}
			if waits == 0 {
				t.Fatalf("a loop with %d active connections never settled", len(fds))
			}
			// The loop is now in its own wait (or about to be): an
			// exchange, a post and a tick must each still reach it.
			burst(t, fds)
			time.Sleep(time.Millisecond)
			exchange(t, fds[0])
			ran := false
			if !l.Call(func() { ran = true }) || !ran {
				t.Fatal("a post did not run on a settled loop")
			}
			burst(t, fds)
			t0 := ticks.Load()
			waitFor(t, "a tick after settling", func() bool { return ticks.Load() > t0 })
		})
	}
}

// sender is a Sender writing one message to its socket: staged where the
// loop batches, through Flush otherwise or when it declines (decline).
type sender struct {
	fd        int
	msg       []byte
	iov       [1]unix.Iovec
	decline   bool
	empty     bool // stages no bytes
	staged    atomic.Int32
	sent      atomic.Int32 // the bytes Sent reported
	sentCalls atomic.Int32
	flushed   atomic.Int32
}

func (s *sender) Stage() (int, []unix.Iovec, bool) {
	if s.decline {
		return 0, nil, false
	}
	s.staged.Add(1)
	if s.empty {
		return s.fd, nil, true
	}
	s.iov[0].Base = &s.msg[0]
	s.iov[0].SetLen(len(s.msg))
	return s.fd, s.iov[:], true
}

func (s *sender) Sent(n int, err syscall.Errno) {
	s.sentCalls.Add(1)
	if err != 0 {
		n = -int(err)
	}
	s.sent.Store(int32(n))
}

func (s *sender) Flush() {
	s.flushed.Add(1)
	unix.Write(s.fd, s.msg)
}

// TestSendersLeaveTogether: the Senders deferred in one batch have their
// writes staged and sent, more than one ring's worth included, and learn
// what each socket took; a Sender that declines is flushed, one that
// stages no bytes is told at once that none went; a loop that does not
// batch flushes them all.
func TestSendersLeaveTogether(t *testing.T) {
	for _, batching := range []bool{true, false} {
		t.Run(map[bool]string{true: "batching", false: "one at a time"}[batching], func(t *testing.T) {
			l, err := New()
			if err != nil {
				t.Fatal(err)
			}
			l.SetSendBatch(batching)
			go l.Run(0, nil)
			t.Cleanup(func() { l.Stop(true) })
			var rings bool
			l.Call(func() { rings = l.sends != nil })
			if batching && !rings {
				t.Skip("the kernel gives this process no io_uring: the loop writes one socket at a time")
			}
			if !batching && rings {
				t.Fatal("SetSendBatch(false) left the loop a ring")
			}
			const n = sendBatch + 6
			var ss []*sender
			var peers []int
			for i := 0; i < n; i++ {
				a, b := socketPair(t)
				ss = append(ss, &sender{fd: a, msg: []byte(string(rune('A'+i%26)) + "-message"), decline: i == 3, empty: i == 5})
				peers = append(peers, b)
			}
			l.Call(func() {
				for _, s := range ss {
					l.Defer(s)
				}
			})
			l.Call(func() {}) // a later batch: the first one's end has run
			buf := make([]byte, 64)
			for i, s := range ss {
				if s.empty && batching {
					if s.staged.Load() != 1 || s.sentCalls.Load() != 1 || s.sent.Load() != 0 || s.flushed.Load() != 0 {
						t.Errorf("empty sender: staged %d, sent %d, flushed %d, want staged once and 0 bytes sent", s.staged.Load(), s.sent.Load(), s.flushed.Load())
					}
					continue
				}
				if k, _ := unix.Read(peers[i], buf); string(buf[:max(k, 0)]) != string(s.msg) {
					t.Errorf("sender %d: its peer read %q, want %q", i, buf[:max(k, 0)], s.msg)
				}
				switch {
				case !batching || s.decline:
					if s.flushed.Load() != 1 || s.staged.Load() != 0 {
						t.Errorf("sender %d: flushed %d times, staged %d, want flushed once", i, s.flushed.Load(), s.staged.Load())
					}
				default:
					if s.staged.Load() != 1 || s.flushed.Load() != 0 || s.sent.Load() != int32(len(s.msg)) {
						t.Errorf("sender %d: staged %d, flushed %d, sent %d, want staged once and %d bytes sent", i, s.staged.Load(), s.flushed.Load(), s.sent.Load(), len(s.msg))
					}
				}
			}
		})
	}
}
