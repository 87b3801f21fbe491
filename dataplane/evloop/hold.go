//go:build linux

package evloop

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A loop that serves a few exchanges holds its thread and processor
// (SetHolding): when it runs out of events it waits in its own
// epoll_pwait(2) as a raw system call, its epoll descriptor taken out of
// the runtime's poller meanwhile, instead of parking in that poller or
// busy-polling. It goes back to parking after holdIdle without events,
// and to the usual path when more than spinMaxActive of its registrations
// are active.
//
// Why: a loop parked in the runtime's poller comes back on whichever
// thread polled, so the kernel cannot keep an exchange's threads on one
// CPU, and the runtime wakes threads of its own around each event. At
// two keep-alive connections through the L4 virtual HAProxy made 2
// epoll_wait and was switched out 2.1 times per request; ltmd 4
// epoll_pwait and about 3 switches, and it ran at 0.6-0.8x HAProxy's rate.
// Waiting through the runtime's system call path instead did not help:
// the runtime takes the processor of a thread blocked for more than 20 µs
// when none is idle and wakes another thread for it, and a descriptor left
// in the runtime's poller wakes the thread waiting there for each event.
// A raw wait with the descriptor out of the poller has HAProxy's profile
// (2 epoll_pwait, 2.1 switches per request), and ran one and two
// connections above HAProxy at less CPU (dataplane/README.md, "A loop
// that holds its thread"). Busy loops do not hold: there a wait after
// every batch put the loops to sleep after two or three events, and 64
// connections lost a quarter of their rate; they settle or park as before.
//
// A holding loop keeps a processor, so at most all processors but one
// hold at once (holders): the rest of the daemon (the runtime's poller
// and the loops parked there, goroutines serving connections off the
// loops, timers) keeps one, and on one processor no loop holds. So that
// two loops can each hold one, the governor gives the process a
// processor more than its loops while more than one loop has events
// and loops hold (procs.go): at two keep-alive connections with
// --busy-poll hold, 0.93x HAProxy against 0.63x without (medians of 5).
// A processor more at all times instead cost the busy loads their rate
// (8 and 64 connections at 0.86x the default). The garbage collector
// still stops a holding loop: the runtime's preemption signal ends the
// wait with EINTR.
const holdIdle = 10 * time.Millisecond

// holding: loops hold (SetHolding); holdOff: they hold while the judge
// of busy-polling has polling off, or while several loops serve one
// exchange each (holdOne) (Govern with Polling: ltmd's default).
var holding, holdOff, holdOne atomic.Bool

// holdOneRegs is the most registrations with events a loop of several
// busy ones may have for them to hold rather than busy-poll (holdOne):
// one exchange, its client and its server.
//
// Why: two loops busy-polling an exchange each on two processors leave
// none to the exchanges' own peers, and each loop's thread comes back on
// whichever CPU the scheduler gives it. Two keep-alive connections ran
// at 0.66-0.78x HAProxy polling and 0.87-1.12x holding (medians of 5
// alternating rounds, three sittings; dataplane/README.md, "Loops on one
// exchange each hold"). Holding wherever loops served a few exchanges
// each lost at two exchanges per loop (four connections: 0.88x against
// polling's 0.95x), so it stops at one; there the judge decides.
const holdOneRegs = 2

// oneEach reports whether the window's busy loops, more than one, served
// one exchange each (holdOneRegs), where they hold under Govern with
// Polling.
func (s procSignals) oneEach() bool {
	return s.loops > 1 && s.peak > 0 && s.peak <= holdOneRegs
}

// holdsNow reports whether a loop that would busy-poll holds instead.
func holdsNow() bool {
	return holding.Load() || holdOff.Load() && (pollOff.Load() || holdOne.Load())
}

// SetHolding makes the process's loops hold their threads while they
// serve a few exchanges (see holdIdle), in place of busy-polling. The
// daemon sets it once, before its loops run (ltmd --busy-poll hold).
func SetHolding(on bool) { holding.Store(on) }

// holdsStarted counts the holds of every loop (HoldsStarted).
var holdsStarted atomic.Uint64

// HoldsStarted is how many times loops began to hold their threads since
// the process started: what shows an operator that holding is in use
// (the metric openltm_event_loop_holds_total).
func HoldsStarted() uint64 { return holdsStarted.Load() }

// holders counts the loops holding now.
var holders spinGate

// mayHold reports whether the loop, out of events after active work on
// at most spinMaxActive registrations, may hold now; if so it counts as a
// holder until hold returns.
func (l *Loop) mayHold() bool {
	if !holdsNow() || len(l.guests) > 0 || l.joinHost != nil {
		return false
	}
	return holders.enter(int32(runtime.GOMAXPROCS(0) - 1))
}

// hold serves the loop's events from its own raw waits, and its ticks,
// until it has had no events for holdIdle (active false), has more than
// spinMaxActive registrations active, is asked to join a host or finds
// that loops no longer hold (the judge turned polling on) (active true),
// or is stopped (stopped true). The caller has taken the loop's
// descriptor out of the runtime's poller.
func (l *Loop) hold(tick time.Duration, next *time.Time) (stopped, active bool) {
	defer holders.leave()
	// Wired: a holding loop that the runtime preempts (it does every
	// 10 ms, as the loop never yields) comes back on its own thread, whose
	// peers the kernel has placed beside it. Not wired, two connections
	// held at 10.4-14.0k requests/s, wired 17.6-20.9k (HAProxy 11.8-17.6k).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	holdsStarted.Add(1)
	idleSince := time.Now()
	for {
		var n int
		if len(l.again) > 0 {
			n = l.poll()
		} else {
			until := idleSince.Add(holdIdle)
			if tick > 0 && next.Before(until) {
				until = *next
			}
			n = l.holdWait(until)
		}
		now := time.Now()
		if n > 0 || len(l.again) > 0 {
			if l.handle(n, now) {
				return true, false
			}
			if n > 0 {
				idleSince = now
			}
			if l.joinHost != nil || l.lastRegs > spinMaxActive || !holdsNow() {
				return false, true
			}
		} else if now.Sub(idleSince) >= holdIdle {
			return false, false
		}
		if tick > 0 && !now.Before(*next) {
			*next = l.ticked(now, tick)
		}
	}
}

// noPwait2: the kernel has no epoll_pwait2 (before Linux 5.11); waits
// are then rounded up to whole milliseconds.
var noPwait2 atomic.Bool

// holdWait waits for the loop's events until the deadline, as a raw
// system call that keeps the loop's thread and processor, and returns
// how many came (0: none, or a signal ended the wait).
func (l *Loop) holdWait(until time.Time) int {
	d := time.Until(until)
	if d <= 0 {
		return l.poll()
	}
	var r uintptr
	var e unix.Errno
	if !noPwait2.Load() {
		l.holdTS = unix.NsecToTimespec(int64(d))
		r, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.epfd),
			uintptr(unsafe.Pointer(&l.events[0])), batch, uintptr(unsafe.Pointer(&l.holdTS)), 0, 0)
		if e != unix.ENOSYS {
			if e != 0 {
				return 0
			}
			return int(r)
		}
		noPwait2.Store(true)
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	r, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), batch, uintptr(ms), 0, 0)
	if e != 0 {
		return 0
	}
	return int(r)
}
