//go:build linux

package evloop

import (
	"runtime"
	"testing"
	"time"
)

// one is the load the judge decides for: one loop on one exchange.
func one(events uint64) pollSignals { return pollSignals{peak: 2, loops: 1, events: events} }

// judgeRun drives a pollJudge for n windows of low load on a machine
// where a window handles on events with polling and off without, and
// returns the standing choice at the end and the windows run without
// polling.
func judgeRun(j *pollJudge, n int, on, off uint64) (standingOff bool, offWindows int) {
	polling := !j.off
	for i := 0; i < n; i++ {
		ev := off
		if polling {
			ev = on
		} else {
			offWindows++
		}
		polling = !j.next(one(ev))
	}
	return j.off, offWindows
}

func TestPollJudge(t *testing.T) {
	probe := 2 * (pollSettle + pollCount)
	cases := []struct {
		name    string
		on, off uint64
		windows int
		wantOff bool
		// offWindows: how many of the windows ran without polling.
		offWindows int
	}{
		{"no probe before pollFirst windows", 150, 100, pollFirst, false, 0},
		{"polling that pays stays on, probed with the other mode first", 150, 100, pollFirst + probe, false, pollSettle + pollCount},
		{"the next probe waits twice as long", 150, 100, pollFirst + probe + 2*pollFirst + probe, false, 2 * (pollSettle + pollCount)},
		{"polling that does not pay goes off", 100, 100, pollFirst + probe, true, pollSettle + pollCount},
		{"a gain within the margin is no gain", 104, 100, pollFirst + probe, true, pollSettle + pollCount},
		{"off, a probe tries polling again and keeps it off",
			100, 100, pollFirst + probe + pollFirst + probe, true,
			(pollSettle + pollCount) + pollFirst + (pollSettle + pollCount)},
		{"off, the probes that confirm it come at a doubling interval",
			100, 100, pollFirst + probe + pollFirst + probe + 2*pollFirst + probe, true,
			3*(pollSettle+pollCount) + 3*pollFirst},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var j pollJudge
			off, offWindows := judgeRun(&j, c.windows, c.on, c.off)
			if off != c.wantOff || offWindows != c.offWindows {
				t.Fatalf("off %v after %d windows, %d of them without polling; want %v, %d", off, c.windows, offWindows, c.wantOff, c.offWindows)
			}
		})
	}

	t.Run("a machine that changes is followed", func(t *testing.T) {
		var j pollJudge
		if off, _ := judgeRun(&j, pollFirst+probe, 100, 100); !off {
			t.Fatal("polling stayed on where it did not pay")
		}
		if off, _ := judgeRun(&j, 4*(pollFirst+probe), 200, 100); off {
			t.Fatal("polling stayed off where it came to pay")
		}
	})

	t.Run("turning polling on again takes more than pollMarginOn", func(t *testing.T) {
		var j pollJudge
		judgeRun(&j, pollFirst+probe, 100, 100)
		if off, _ := judgeRun(&j, 3*(pollFirst+probe), 110, 100); !off {
			t.Fatal("polling turned on again for a 10 % gain")
		}
		// The probes that kept it off came at a doubling interval: the
		// next is at most pollMax windows away.
		if off, _ := judgeRun(&j, pollMax+probe, 120, 100); off {
			t.Fatal("polling stayed off for a 20 % gain")
		}
		if off, _ := judgeRun(&j, 3*(pollFirst+probe), 110, 100); off {
			t.Fatal("polling went off again for a 10 % gain")
		}
	})

	t.Run("a window without such load abandons the probe", func(t *testing.T) {
		var j pollJudge
		judgeRun(&j, pollFirst, 100, 100)
		if !j.next(one(100)) {
			t.Fatal("the probe's second window polls: want off, the other mode first")
		}
		if j.next(pollSignals{peak: judgedMaxRegs + 1, loops: 1, events: 900}) {
			t.Fatal("a busy window during the probe: want the standing choice (on)")
		}
		// The busy window's events count nowhere: with polling paying
		// from here, the probe run again keeps it on.
		if off, _ := judgeRun(&j, probe+1, 150, 100); off {
			t.Fatal("polling went off after an abandoned probe")
		}
	})

	t.Run("loops on exchanges of their own poll, and one alone is judged again", func(t *testing.T) {
		var j pollJudge
		if off, _ := judgeRun(&j, pollFirst+probe, 100, 100); !off {
			t.Fatal("polling stayed on where it did not pay")
		}
		two := pollSignals{peak: 2, loops: 2, events: 100}
		for i := 0; i < 3*pollFirst; i++ {
			if j.next(two) {
				t.Fatal("two loops on an exchange each: want polling, the default")
			}
		}
		if !j.next(pollSignals{}) {
			t.Fatal("an idle window: want the standing choice (off)")
		}
		if !j.next(one(100)) {
			t.Fatal("one loop again: want the standing choice (off) until the next probe")
		}
	})

	t.Run("windows without such load do not bring the probe nearer", func(t *testing.T) {
		var j pollJudge
		for i := 0; i < 3*pollFirst; i++ {
			if j.next(pollSignals{peak: judgedMaxRegs + 1, loops: 1, events: 100}) {
				t.Fatal("polling went off without a probe")
			}
		}
		if off, offWindows := judgeRun(&j, pollFirst, 100, 100); off || offWindows != 0 {
			t.Fatalf("a probe before pollFirst windows of low load: off %v, %d windows without polling", off, offWindows)
		}
	})
}

func TestJudgedLoads(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    pollSignals
		want bool
	}{
		{"one loop on one exchange", pollSignals{peak: 2, loops: 1}, true},
		{"one loop on two exchanges", pollSignals{peak: spinMaxActive, loops: 1}, true},
		{"two loops on an exchange each: they hold, no trial", pollSignals{peak: holdOneRegs, loops: 2}, false},
		{"two loops with a listener and an exchange each", pollSignals{peak: 3, loops: 2}, true},
		{"two loops on two exchanges each", pollSignals{peak: spinMaxActive, loops: 2}, true},
		{"a peak next to the polling loops'", pollSignals{peak: spinMaxActive + 1, loops: 1}, true},
		{"two loops, peaks next to the polling loops' (a new connection per request)", pollSignals{peak: judgedMaxRegs, loops: 2}, true},
		{"a loop too busy to poll", pollSignals{peak: judgedMaxRegs + 1, loops: 1}, false},
		{"two loops too busy to poll", pollSignals{peak: judgedMaxRegs + 1, loops: 2}, false},
		{"no events", pollSignals{}, false},
	} {
		if got := tc.s.judged(); got != tc.want {
			t.Errorf("%s (%+v): judged %v, want %v", tc.name, tc.s, got, tc.want)
		}
	}
}

// TestJudgedOffLoopsHoldAndCount: with polling judged off a loop given a
// busy-poll time holds its thread between exchanges instead of polling
// (hold.go), and the governor's sampler reads the events it handled and
// that it may poll.
func TestJudgedOffLoopsHoldAndCount(t *testing.T) {
	was := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))) // a holder needs a processor to spare
	pollOff.Store(true)
	holdOff.Store(true) // as Govern with Polling
	t.Cleanup(func() {
		pollOff.Store(false)
		holdOff.Store(false)
		runtime.GOMAXPROCS(was)
	})
	l := startPolling(t)
	held := HoldsStarted()
	fd := echoPair(t, l)
	sample := sampleProcs()
	sample() // from here
	for i := 0; i < 10; i++ {
		exchange(t, fd)
		time.Sleep(2 * time.Millisecond) // each exchange in an activity window of its own
	}
	exchange(t, fd) // rolls the last window over
	if spins := onLoop(l, func() int { return l.spins }); spins != 0 {
		t.Fatalf("the loop polled %d times with polling off", spins)
	}
	if holdsSince(held) == 0 {
		t.Fatal("the loop never held its thread with polling off")
	}
	s := sample()
	if !s.polls || s.events < 5 || s.peak < 1 || s.loops != 1 {
		t.Fatalf("sampled %+v: want polls, the exchanges' events, a peak and one loop", s)
	}
	// Polling judged on again: the loop leaves its hold at its next
	// events and polls.
	pollOff.Store(false)
	for i := 0; i < 5; i++ {
		exchange(t, fd)
		time.Sleep(time.Millisecond)
	}
	if spins := onLoop(l, func() int { return l.spins }); spins == 0 {
		t.Fatal("the loop never polled after polling was judged on again")
	}
}
