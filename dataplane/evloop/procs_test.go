//go:build linux

package evloop

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestGovernorNext(t *testing.T) {
	moderate := procSignals{peak: 12, cpu: 0.6}
	type step struct {
		s    procSignals
		at   time.Duration
		want int
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"down after governLow moderate windows", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1}, {moderate, 600, 1},
		}},
		{"a window that does not qualify starts the count again", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2},
			{procSignals{peak: 12, cpu: 0.85}, 500, 2},
			{moderate, 600, 2}, {moderate, 700, 2}, {moderate, 800, 2}, {moderate, 900, 2}, {moderate, 1000, 1},
		}},
		{"busy-polling loops keep every processor", []step{
			{procSignals{peak: 3, cpu: 0.3}, 100, 2}, {procSignals{peak: 4}, 200, 2}, {procSignals{peak: 2}, 300, 2},
			{procSignals{peak: 1}, 400, 2}, {procSignals{peak: 3}, 500, 2}, {procSignals{peak: 3}, 600, 2},
		}},
		{"two loops holding get a processor more while they do", []step{
			{procSignals{peak: 2, loops: 2, held: true}, 100, 3}, {procSignals{peak: 2, loops: 2, held: true}, 200, 3},
			{procSignals{peak: 2, loops: 1, held: true}, 300, 2}, // one holder needs none
			{procSignals{peak: 2, loops: 2, held: true}, 400, 3},
			{procSignals{peak: 2, loops: 2}, 500, 2},
		}},
		{"settling loops keep every processor", []step{
			{procSignals{peak: 60, settled: true}, 100, 2}, {procSignals{peak: 60, settled: true}, 200, 2},
			{procSignals{peak: 60, settled: true}, 300, 2}, {procSignals{peak: 60, settled: true}, 400, 2},
			{procSignals{peak: 60, settled: true}, 500, 2}, {procSignals{peak: 60, settled: true}, 600, 2},
		}},
		{"idle windows change nothing", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1},
			{procSignals{}, 600, 1}, {procSignals{}, 700, 1},
		}},
		{"up at once when loops settle, poll or the CPU is full", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1},
			{procSignals{peak: 40, settled: true}, 600, 2},
			{moderate, 700, 2}, {moderate, 800, 2}, {moderate, 900, 2}, {moderate, 1000, 2}, {moderate, 1100, 1},
			{procSignals{peak: 2}, 1200, 2},
			{moderate, 1300, 2}, {moderate, 1400, 2}, {moderate, 1500, 2}, {moderate, 1600, 2}, {moderate, 1700, 1},
			{procSignals{peak: 12, cpu: 0.95}, 1800, 2},
		}},
		{"slow turns hold every processor, longer each time", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1},
			{procSignals{peak: 12, cpu: 0.6, slow: 0.2}, 600, 2}, // hold 1 s: until 1600
			{moderate, 1200, 2}, {moderate, 1300, 2}, {moderate, 1400, 2}, {moderate, 1500, 2}, {moderate, 1590, 2},
			{moderate, 1600, 2}, {moderate, 1700, 2}, {moderate, 1800, 2}, {moderate, 1900, 2}, {moderate, 2000, 1},
			{procSignals{peak: 12, cpu: 0.6, slow: 0.2}, 2100, 2}, // hold 2 s: until 4100
			{moderate, 3700, 2}, {moderate, 3800, 2}, {moderate, 3900, 2}, {moderate, 4000, 2}, {moderate, 4090, 2},
			{moderate, 4100, 2}, {moderate, 4200, 2}, {moderate, 4300, 2}, {moderate, 4400, 2}, {moderate, 4500, 1},
		}},
		{"after a long calm the hold starts again from a second", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1},
			{procSignals{peak: 12, cpu: 0.6, slow: 0.2}, 600, 2}, // hold 1 s: until 1600
			{moderate, 1600, 2}, {moderate, 1700, 2}, {moderate, 1800, 2}, {moderate, 1900, 2}, {moderate, 2000, 1},
			{procSignals{peak: 12, cpu: 0.6, slow: 0.2}, 30000, 2}, // 28 s calm: 1 s again, until 31000, not 2 s
			{moderate, 30900, 2}, {moderate, 31000, 2}, {moderate, 31100, 2}, {moderate, 31200, 2}, {moderate, 31300, 2}, {moderate, 31400, 1},
		}},
		{"a few slow turns on one processor are no reason", []step{
			{moderate, 100, 2}, {moderate, 200, 2}, {moderate, 300, 2}, {moderate, 400, 2}, {moderate, 500, 1},
			{procSignals{peak: 12, cpu: 0.6, slow: 0.04}, 600, 1},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := governor{full: 2, cur: 2}
			for i, st := range c.steps {
				got := g.next(st.s, st.at*time.Millisecond)
				if got != st.want {
					t.Fatalf("step %d (%+v at %v ms): %d processors, want %d", i, st.s, int(st.at), got, st.want)
				}
				g.cur = got
			}
		})
	}
}

// echoes sends one byte to an echo (echoPair) and reports whether it came
// back within 5 s.
func echoes(t *testing.T, fd int) bool {
	t.Helper()
	if _, err := unix.Write(fd, []byte{'x'}); err != nil {
		t.Fatal(err)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 5000); err != nil || n != 1 {
		return false
	}
	b := make([]byte, 1)
	n, err := unix.Read(fd, b)
	return err == nil && n == 1
}

func guestsOf(l *Loop) int { return onLoop(l, func() int { return len(l.guests) }) }

// hostTwo starts two loops alone in the process, the second ticking every
// 5 ms (counted), the first every hostTick (0: never; a host ticks its
// guests, so only a loop with the same ticks is hosted), and restores the
// processors afterwards.
func hostTwo(t *testing.T, hostTick time.Duration) (host, other *Loop, ticks *atomic.Int32) {
	t.Helper()
	if p := running.ls.Load(); p != nil && len(*p) > 0 {
		t.Fatalf("%d loops still running from other tests", len(*p))
	}
	full := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { setProcs(full) })
	ticks = new(atomic.Int32)
	host = startLoop(t, hostTick, nil)
	waitFor(t, "the first loop to run", func() bool { p := running.ls.Load(); return p != nil && len(*p) == 1 })
	other = startLoop(t, 5*time.Millisecond, func(int64) { ticks.Add(1) })
	waitFor(t, "both loops to run", func() bool { return len(*running.ls.Load()) == 2 })
	return host, other, ticks
}

func TestOneProcessorHostsTheOtherLoops(t *testing.T) {
	host, guest, ticks := hostTwo(t, 5*time.Millisecond)
	a, b := echoPair(t, host), echoPair(t, guest)
	full := runtime.GOMAXPROCS(0)
	joined(t, host)
	if runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("GOMAXPROCS %d on one processor", runtime.GOMAXPROCS(0))
	}
	for i := 0; i < 20; i++ {
		if !echoes(t, a) || !echoes(t, b) {
			t.Fatalf("exchange %d through the host or its guest went unanswered", i)
		}
	}
	var ran atomic.Bool
	if !guest.Call(func() { ran.Store(true) }) || !ran.Load() {
		t.Fatal("a function posted to the guest did not run")
	}
	n := ticks.Load()
	waitFor(t, "the guest's ticks", func() bool { return ticks.Load() >= n+3 })

	setProcs(full)
	waitFor(t, "the guest to be released", func() bool { return guestsOf(host) == 0 })
	if runtime.GOMAXPROCS(0) != full {
		t.Fatalf("GOMAXPROCS %d after going back to %d", runtime.GOMAXPROCS(0), full)
	}
	for i := 0; i < 20; i++ {
		if !echoes(t, a) || !echoes(t, b) {
			t.Fatalf("exchange %d after the release went unanswered", i)
		}
	}
	if c := guest.Call(func() {}); !c {
		t.Fatal("the released guest does not run posted functions")
	}
}

// A guest's events are counted once, by the guest: the host's
// registration of the guest's epoll descriptor is neither an active
// registration nor an event of the host's. Otherwise a judge of polling
// (polljudge.go) would see two busy loops where one exchange runs, and
// more events on one processor than on two.
func TestAGuestsEventsAreCountedOnce(t *testing.T) {
	host, guest, _ := hostTwo(t, 5*time.Millisecond)
	b := echoPair(t, guest)
	joined(t, host)
	sample := sampleProcs()
	sample() // from here
	const exchanges = 20
	for i := 0; i < exchanges; i++ {
		if !echoes(t, b) {
			t.Fatalf("exchange %d through the guest went unanswered", i)
		}
		time.Sleep(2 * activityWindow) // each in a window of its own
	}
	echoes(t, b) // rolls the last window over
	s := sample()
	if s.loops != 1 || s.events < exchanges || s.events > exchanges+5 {
		t.Fatalf("sampled %d loops with events and %d events for %d exchanges through one guest; want 1 and about %d", s.loops, s.events, exchanges+1, exchanges+1)
	}
}

// joined switches to one processor and waits for host to serve its guest.
func joined(t *testing.T, host *Loop) {
	t.Helper()
	setProcs(1)
	waitFor(t, "the second loop to join the first", func() bool { return guestsOf(host) == 1 })
}

// stopWithin stops l and fails the test if that takes 5 s.
func stopWithin(t *testing.T, l *Loop, what string) {
	t.Helper()
	stopped := make(chan struct{})
	go func() { l.Stop(true); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatalf("stopping %s did not return", what)
	}
}

func TestStoppingAHostedLoop(t *testing.T) {
	host, guest, _ := hostTwo(t, 5*time.Millisecond)
	a := echoPair(t, host)
	joined(t, host)
	stopWithin(t, guest, "a hosted loop")
	if guestsOf(host) != 0 {
		t.Fatal("the host still serves a stopped guest")
	}
	if !echoes(t, a) {
		t.Fatal("the host stopped serving its own descriptors")
	}
}

func TestStoppingAHostReleasesItsGuests(t *testing.T) {
	host, guest, _ := hostTwo(t, 5*time.Millisecond)
	b := echoPair(t, guest)
	joined(t, host)
	stopWithin(t, host, "a host")
	for i := 0; i < 5; i++ {
		if !echoes(t, b) {
			t.Fatal("the guest of a stopped host does not serve its descriptors")
		}
	}
}

func TestAJoinFromBeforeASwitchIsRefused(t *testing.T) {
	host, guest, _ := hostTwo(t, 5*time.Millisecond)
	b := echoPair(t, guest)
	full := runtime.GOMAXPROCS(0)
	// The guest is busy when asked to join, so that the switch back comes
	// before its request reaches the host.
	release := make(chan struct{})
	guest.Post(func() { <-release })
	setProcs(1)
	setProcs(full)
	close(release)
	refused(t, host, guest, b)
}

// refused checks that the request to join host that other has handled
// was refused: host serves no guest and other serves b's echo itself.
func refused(t *testing.T, host, other *Loop, b int) {
	t.Helper()
	// other's answer comes after its request was taken or refused (it
	// waits for that), and host's after both.
	onLoop(other, func() int { return 0 })
	if guestsOf(host) != 0 {
		t.Fatal("the request to join was taken")
	}
	if !echoes(t, b) {
		t.Fatal("the loop that was asked to join does not serve its descriptors")
	}
}

func TestALoopWithOtherTicksIsNotHosted(t *testing.T) {
	host, other, ticks := hostTwo(t, 0)
	b := echoPair(t, other)
	setProcs(1)
	refused(t, host, other, b)
	n := ticks.Load()
	waitFor(t, "the loop's own ticks", func() bool { return ticks.Load() >= n+3 })
}

func TestSwitchingBackAndForthEndsHosted(t *testing.T) {
	host, guest, _ := hostTwo(t, 5*time.Millisecond)
	b := echoPair(t, guest)
	full := runtime.GOMAXPROCS(0)
	for i := 0; i < 5; i++ {
		setProcs(1)
		setProcs(full)
	}
	joined(t, host)
	if !echoes(t, b) {
		t.Fatal("the guest's descriptors went unanswered")
	}
	setProcs(full)
	waitFor(t, "the guest to be released", func() bool { return guestsOf(host) == 0 })
}

func TestGovernorStartsAndStops(t *testing.T) {
	full := runtime.GOMAXPROCS(0)
	if full < 2 {
		t.Skip("nothing to govern on one processor")
	}
	Govern(Governed{Procs: true, Polling: true})
	Govern(Governed{Procs: true}) // a second start changes nothing
	if Procs() != full {
		t.Fatalf("Procs %d while governing %d processors", Procs(), full)
	}
	time.Sleep(3 * governEvery) // a few idle windows: no switch
	if runtime.GOMAXPROCS(0) != full {
		t.Fatalf("GOMAXPROCS %d with no loop running", runtime.GOMAXPROCS(0))
	}
	pollOff.Store(true) // as a judge that found polling not paying
	StopGoverning()
	StopGoverning()
	if pollOff.Load() {
		t.Fatal("polling still off after the governor stopped")
	}
	if gov.full.Load() != 0 || runtime.GOMAXPROCS(0) != full {
		t.Fatalf("after stopping: governed %d, GOMAXPROCS %d", gov.full.Load(), runtime.GOMAXPROCS(0))
	}
}

// A hosted loop's turns (Again) run though they raise no event: a
// handler that reads a byte a turn and asks for another turn echoes
// every byte of a burst that came with one edge.
func TestAGuestsTurnsRunWithoutEvents(t *testing.T) {
	for _, hosted := range []bool{false, true} {
		t.Run(fmt.Sprintf("hosted %v", hosted), func(t *testing.T) {
			host, guest, _ := hostTwo(t, 5*time.Millisecond)
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
			if err := unix.SetNonblock(fds[0], true); err != nil {
				t.Fatal(err)
			}
			var tok Token
			e := &recorder{}
			one := make([]byte, 1)
			e.step = func(uint32) {
				if n, err := unix.Read(fds[0], one); err == nil && n == 1 {
					unix.Write(fds[0], one)
					guest.Again(tok) // perhaps more: read it next turn
				}
			}
			guest.Call(func() {
				if tok, err = guest.Add(fds[0], In|Edge, e, 0); err != nil {
					t.Error(err)
				}
			})
			if hosted {
				joined(t, host)
			}
			const burst = "abcdefgh"
			if _, err := unix.Write(fds[1], []byte(burst)); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 0, len(burst))
			deadline := time.Now().Add(5 * time.Second)
			for len(got) < len(burst) && time.Now().Before(deadline) {
				fds1 := []unix.PollFd{{Fd: int32(fds[1]), Events: unix.POLLIN}}
				if n, _ := unix.Poll(fds1, 100); n != 1 {
					continue
				}
				b := make([]byte, 16)
				if n, err := unix.Read(fds[1], b); err == nil {
					got = append(got, b[:n]...)
				}
			}
			if string(got) != burst {
				t.Fatalf("echoed %q of %q in 5 s", got, burst)
			}
		})
	}
}
