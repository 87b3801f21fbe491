//go:build linux

package evloop

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The processor governor runs the process on one Go processor
// (GOMAXPROCS 1), with the first event loop serving the others' events
// on its goroutine, while the loops park between events; on all the
// processors, each loop on its own goroutine, while loops busy-poll or
// settle, or the process needs more than one CPU.
//
// Why: with a processor to spare, the Go scheduler spends it on every
// wake-up of a loop. A loop parked in the runtime's poller is readied by
// whichever thread polled; the runtime wakes an idle processor's thread
// to run it or to look for more work, and that thread sleeps again
// microseconds later: futex calls, context switches and, on a machine
// shared with the clients and members, a CPU woken from idle for each
// message. Measured on 2 vCPUs shared with them (dataplane/README.md,
// "One processor while loops park"), eight message clients cost ltmd
// 11.9-14.7 µs of CPU per message on two processors and 9.8-10.6 on one
// (no futex call, 1.25 epoll_pwait per message instead of 2.0). One
// loop must serve them all: two loops sharing one processor wait for
// each other's batches, and their peers' CPU per message rose as much as
// ltmd's fell. Where loops settle (plain L4 flows from 32 connections)
// one processor was 4-9 % slower, a single thread on the path of every
// exchange; two loops that busy-poll an exchange each need a CPU each.
//
// The signals, read every governEvery:
//   - whether a loop settled, and the busiest loop's registrations with
//     events in one activity window (at most spinMaxActive: it
//     busy-polls, or holds its thread where the judge has polling off,
//     polljudge.go and hold.go);
//   - the process's CPU time (getrusage): above oneCPU of a CPU it does
//     not go down, above fullCPU it goes up;
//   - the runtime's scheduling latencies: on one processor, goroutines
//     kept waiting slowAfter or more for more than slowShare of their
//     turns (a TLS handshake, a configuration load) mean one processor is
//     not enough.
//
// It goes down after governLow windows in a row that qualify and up at
// the first that does not. After going up because goroutines waited it
// stays up for a hold that doubles each time (holdFirst to holdMax), so
// that work coming back periodically does not make it switch back and
// forth. A switch stops the world for some tens of microseconds.
const (
	governEvery = 100 * time.Millisecond
	governLow   = 5
	oneCPU      = 0.8
	fullCPU     = 0.9
	slowAfter   = time.Millisecond
	slowShare   = 0.05
	holdFirst   = time.Second
	holdMax     = time.Minute
)

// procSignals is what one governEvery window measured.
type procSignals struct {
	peak    int     // the busiest loop's active registrations in one activity window
	loops   int     // loops that had events
	settled bool    // a loop settled
	cpu     float64 // CPU seconds the process used per second
	slow    float64 // share of goroutine schedulings that waited slowAfter or more
	polls   bool    // a loop may busy-poll (SetBusyPoll)
	held    bool    // a loop held its thread (hold.go)
	events  uint64  // events the loops handled
}

// governor decides the processor count from the signals of each window;
// it reads no clock or runtime state itself, so that tests drive it.
type governor struct {
	full, cur int
	low       int           // qualifying windows in a row
	hold      time.Duration // how long to stay up after going up for slow turns
	holdUntil time.Duration // elapsed time before which it does not go down
	calmSince time.Duration // when it last went down
}

// next returns the processors to run with after the window that ended
// at elapsed (time since the governor started): one, all (full), or one
// more than all while loops hold their threads and more than one loop
// has events, so that each may hold one (holders leave one processor
// to the rest of the daemon; hold.go).
func (g *governor) next(s procSignals, elapsed time.Duration) int {
	switch n := g.count(s, elapsed); {
	case n > 1 && s.held && s.loops > 1:
		return g.full + 1
	case n > 1:
		return g.full
	default:
		return n
	}
}

// count is next's choice between one processor and all of them.
func (g *governor) count(s procSignals, elapsed time.Duration) int {
	moderate := s.peak > spinMaxActive && !s.settled
	if g.cur == 1 {
		switch {
		case s.slow > slowShare:
			if g.hold == 0 || elapsed-g.calmSince > 10*g.hold {
				g.hold = holdFirst // calm for long: the backoff starts again
			} else {
				g.hold = min(2*g.hold, holdMax)
			}
			g.holdUntil = elapsed + g.hold
			return g.full
		case s.peak > 0 && !moderate, s.cpu > fullCPU:
			return g.full
		}
		return 1
	}
	if !moderate || s.cpu > oneCPU || elapsed < g.holdUntil {
		g.low = 0
		return g.cur
	}
	if g.low++; g.low < governLow {
		return g.cur
	}
	g.low = 0
	g.calmSince = elapsed
	return 1
}

var gov struct {
	mu   sync.Mutex
	full atomic.Int32 // the processors governed (0: no governor)
	stop chan struct{}
	done chan struct{}
	// epoch counts the switches: a request to be hosted carries the epoch
	// of the switch to one processor that made it, and one made before a
	// later switch is refused.
	epoch atomic.Uint64
}

// Procs is the number of processors to size per-processor work by (event
// loops, the sockets of a reuse-port group): the count the process had
// when the governor started, GOMAXPROCS without one.
func Procs() int {
	if n := gov.full.Load(); n > 0 {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}

// Govern starts the governor. A daemon's main calls it once, before
// anything is sized by Procs; StopGoverning ends it.
func Govern(what Governed) {
	gov.mu.Lock()
	defer gov.mu.Unlock()
	if gov.stop != nil {
		return
	}
	full := runtime.GOMAXPROCS(0)
	procs := what.Procs && full >= 2 && os.Getenv("GOMAXPROCS") == ""
	if !procs && !what.Polling {
		return
	}
	if procs {
		gov.full.Store(int32(full))
	}
	holdOff.Store(what.Polling)
	gov.stop, gov.done = make(chan struct{}), make(chan struct{})
	stop, done := gov.stop, gov.done
	go func() {
		defer close(done)
		t := time.NewTicker(governEvery)
		defer t.Stop()
		g := governor{full: full, cur: full}
		var j pollJudge
		sample := sampleProcs()
		start := time.Now()
		for {
			select {
			case <-stop:
				if procs {
					setProcs(full)
				}
				pollOff.Store(false)
				holdOff.Store(false)
				holdOne.Store(false)
				return
			case <-t.C:
			}
			s := sample()
			if procs {
				if n := g.next(s, time.Since(start)); n != g.cur {
					setProcs(n)
					g.cur = n
				}
			}
			if what.Polling && s.polls {
				pollOff.Store(j.next(pollSignals{peak: s.peak, loops: s.loops, events: s.events}))
				holdOne.Store(s.oneEach())
			}
		}
	}()
}

// setProcs switches to n processors: on one, the first running loop
// hosts the others running then (each is asked to join it, and waits,
// parked, until released; a loop started later serves itself until the
// next switch, which the daemon's loops, started once, never meet); on
// more, every host releases its guests.
func setProcs(n int) {
	e := gov.epoch.Add(1)
	ls := running.ls.Load()
	if n == 1 {
		runtime.GOMAXPROCS(1)
		if ls == nil || len(*ls) < 2 {
			return
		}
		host := (*ls)[0]
		for _, g := range (*ls)[1:] {
			g.Post(func() { g.joinHost, g.joinEpoch = host, e })
		}
		return
	}
	if ls != nil {
		for _, l := range *ls {
			l.Post(l.releaseGuests)
		}
	}
	runtime.GOMAXPROCS(n)
}

// StopGoverning ends the governor, if one runs, and gives the process
// back the processors it started with (and every loop its goroutine)
// and its loops their polling.
func StopGoverning() {
	gov.mu.Lock()
	defer gov.mu.Unlock()
	if gov.stop == nil {
		return
	}
	close(gov.stop)
	<-gov.done
	gov.stop, gov.done = nil, nil
	gov.full.Store(0)
}

// guest is a loop whose events another loop (its host) serves, on the
// host's goroutine, while the process runs on one processor. The guest's
// own goroutine waits meanwhile, so its state has one user at a time; its
// posts wake it through its eventfd, which is in its epoll set, which is
// in the host's.
type guest struct {
	l   *Loop // the guest
	h   *Loop // its host
	tok Token // the guest's epoll descriptor in the host's set
}

// Ready serves a batch of the guest's events, as its own Run would.
// The host calls it for the guest's events and for the turns the guest
// asked of itself (Again), which have no event of their own.
func (g *guest) Ready(_ uint8, _ uint32) {
	if n := g.l.poll(); (n > 0 || len(g.l.again) > 0) && g.l.handle(n, time.Now()) {
		g.h.release(g) // the guest was stopped
	}
}

// adopt makes h serve g's events until release; g's goroutine waits on
// g.resume meanwhile. A request from before the last switch, to a
// stopped host or to one whose ticks are not g's (the host ticks its
// guests) is refused: g goes on by itself.
func (h *Loop) adopt(g *Loop, epoch uint64) {
	if gov.epoch.Load() != epoch || h.isStopped() || h.tick != g.tick {
		close(g.resume)
		return
	}
	gs := &guest{l: g, h: h}
	tok, err := h.Add(g.epfd, In, gs, 0)
	if err != nil {
		close(g.resume)
		return
	}
	gs.tok = tok
	h.slots[uint32(tok)].guest = true
	h.guests = append(h.guests, gs)
	g.hostedAs = gs
	if len(g.again) > 0 { // turns it asked for before it was adopted
		h.Again(tok)
	}
}

// release gives gs its goroutine back.
func (h *Loop) release(gs *guest) {
	for i, o := range h.guests {
		if o == gs {
			h.guests = append(h.guests[:i], h.guests[i+1:]...)
			h.Remove(gs.l.epfd, gs.tok)
			gs.l.hostedAs = nil
			close(gs.l.resume)
			return
		}
	}
}

// releaseGuests releases every guest of h.
func (h *Loop) releaseGuests() {
	for len(h.guests) > 0 {
		h.release(h.guests[0])
	}
}

// sampleProcs returns the sampler of the running process: each call
// measures the window since the last one.
func sampleProcs() func() procSignals {
	samples := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var lastCPU time.Duration
	var lastAt time.Time
	var lastCounts []uint64
	var lastHolds uint64
	return func() procSignals {
		var s procSignals
		holds := holdsStarted.Load()
		s.held = holders.n.Load() > 0 || holds != lastHolds
		lastHolds = holds
		if p := running.ls.Load(); p != nil {
			for _, l := range *p {
				p := int(l.peakRegs.Swap(0))
				s.peak = max(s.peak, p)
				if p > 0 {
					s.loops++
				}
				s.settled = l.settled.Swap(false) || s.settled
				s.events += l.handled.Swap(0)
				s.polls = s.polls || l.spin > 0
			}
		}
		var ru syscall.Rusage
		now := time.Now()
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			if !lastAt.IsZero() {
				s.cpu = (cpu - lastCPU).Seconds() / now.Sub(lastAt).Seconds()
			}
			lastCPU, lastAt = cpu, now
		}
		metrics.Read(samples)
		if samples[0].Value.Kind() == metrics.KindFloat64Histogram {
			h := samples[0].Value.Float64Histogram()
			if len(lastCounts) == len(h.Counts) {
				var all, slow uint64
				for i, c := range h.Counts {
					d := c - lastCounts[i]
					all += d
					if h.Buckets[i] >= slowAfter.Seconds() {
						slow += d
					}
				}
				if all > 0 {
					s.slow = float64(slow) / float64(all)
				}
			}
			lastCounts = append(lastCounts[:0], h.Counts...)
		}
		return s
	}
}
