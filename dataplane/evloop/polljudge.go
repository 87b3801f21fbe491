//go:build linux

package evloop

import "sync/atomic"

// pollOff is the judge's standing choice (or its probe's): loops that
// would busy-poll park instead.
var pollOff atomic.Bool

// PollingOff reports whether the judge has busy-polling off now, so that
// an operator can see what `--busy-poll auto` chose (the metrics export
// it), as HAProxy's `show info` shows its Busy_polling.
func PollingOff() bool { return pollOff.Load() }

// Whether busy-polling pays is decided by trying: while loops serve
// exchanges they would busy-poll for (a peak of at most judgedMaxRegs
// active registrations each; not several loops on one exchange each,
// which hold: pollSignals.judged), the process now and then turns
// polling off (the loops then hold their threads instead, hold.go)
// for a few governEvery windows and compares the events its loops
// handled with the windows next to them with polling on; polling
// stays on only if it made the loops handle more events, by more than
// pollMargin, and is turned on again only for more than pollMarginOn
// (the events of 300 ms vary by several per cent from one to the
// next, and probes come more often while polling is off, below). A
// loop's peers that wait for its answers (keep-alive clients,
// members) send sooner when it answers sooner, so on such exchanges
// the events handled per second are their rate; where polling does
// not raise that rate, it only spends a CPU (and takes it from those
// peers on a small machine).
//
// Why: the gain is the machine's. On one 2-vCPU machine one keep-alive
// connection through the L4 virtual ran 1.85x HAProxy's rate polling; on
// another of the same size, where each system call and wake-up cost two
// to three times as much, polling ran 0.83x HAProxy at twice the CPU per
// request, and not polling 1.0x (dataplane/README.md, "When polling does
// not pay"). No fixed rule told the two apart.
//
// Probes come after pollFirst windows of such load, and the interval
// doubles each time a probe confirms the standing choice (up to pollMax
// windows), as each probe's windows in the other mode cost what the
// choice gains: polling's CPU where it does not pay (a probe every 2 s
// kept one keep-alive connection polling a sixth of the time), its rate
// where it does. A probe is abandoned when the load stops being such in
// one of its windows. Where several loops serve one exchange each they
// hold (holdOneRegs, hold.go) and the judge's choice waits: it comes
// back when the load is one it judges again.
const (
	pollSettle   = 1    // windows after a switch that are not counted
	pollCount    = 3    // windows counted in each mode
	pollFirst    = 20   // windows before the first probe (2 s)
	pollMax      = 100  // the longest interval between probes (10 s)
	pollMargin   = 0.05 // what polling must gain to stay on
	pollMarginOn = 0.15 // and to be turned on again
)

// pollSignals is what one governEvery window measured for the judge.
type pollSignals struct {
	peak   int    // the busiest loop's active registrations in one activity window
	loops  int    // loops that had events
	events uint64 // events the loops handled in the window
}

// judged reports whether the window's load is one the judge decides for:
// loops that busy-poll in most of their activity windows (a peak of 1
// to judgedMaxRegs active registrations each), except several loops on
// one exchange each (holdOneRegs), which hold without a trial. Why not
// those: with two loops each on an exchange of its own the rate is
// bimodal for both proxies (which of the two CPUs each thread lands on
// decides it), and windows of a few hundred milliseconds either way
// missed the fast mode that polling, left on, reaches: judged, two keep-alive connections ran at a median of 13.0k
// requests/s against 19.1k polling always (HAProxy 17.1k)
// (dataplane/README.md, "When polling does not pay"); holding both
// reaches it more often than polling. Where each loop has a listener's
// events too (a new connection per request) or two exchanges, the trial
// decides: one new connection per request polled on both loops at 0.90-
// 0.98x HAProxy and 1.2-1.3x its CPU per request, judged it ran at
// 0.97-1.02x at HAProxy's CPU; four keep-alive connections 1.13-1.19x
// polling, 1.10-1.19x judged (two sittings of 5 rounds).
//
// The peak may reach twice spinMaxActive (judgedMaxRegs): a loop's
// busiest activity window of the 100 ms has a few more registrations
// than its usual one, and its loops poll, or hold, in most of their
// windows still. A new connection per request put the peak at 3 to 5
// on one connection and 5 to 7 on two (the listener, the exchange, the
// one before it closing); judged only up to spinMaxActive, every window
// above it abandoned the probe in progress and turned polling on, so
// the loops polled nearly all the time at one connection, where the
// probes that finished found holding a fifth ahead. Judged, one new
// connection per request ran at 1.07x HAProxy and 110-128 µs per
// request, against 0.96x and 156-182 µs (dataplane/README.md, "Judging
// the peaks next to the load").
func (s pollSignals) judged() bool {
	return s.peak > 0 && s.peak <= judgedMaxRegs && (s.loops == 1 || s.peak > holdOneRegs)
}

// judgedMaxRegs is the highest peak the judge decides for (judged).
const judgedMaxRegs = 2 * spinMaxActive

// pollJudge decides from the signals of each window whether loops may
// busy-poll; like governor it reads no clock or loop itself, so that
// tests drive it.
type pollJudge struct {
	off   bool // the standing choice: polling off
	wait  int  // windows of such load until the next probe
	every int  // the current interval between probes
	// A probe in progress: step counts its windows from 1 (0: none);
	// sum holds the events counted with polling off [0] and on [1].
	step int
	sum  [2]uint64
}

// probeOff reports whether polling is off in the probe's window number
// step: the other mode first, then the standing one.
func (j *pollJudge) probeOff(step int) bool {
	if step <= pollSettle+pollCount {
		return !j.off
	}
	return j.off
}

// next takes the window that just ended and returns whether polling is
// off for the next one.
func (j *pollJudge) next(s pollSignals) bool {
	if j.every == 0 {
		j.every, j.wait = pollFirst, pollFirst
	}
	if !s.judged() {
		j.step = 0
		if s.loops > 1 {
			return false // polling, the default where no trial tells
		}
		return j.off
	}
	if j.step == 0 {
		if j.wait--; j.wait > 0 {
			return j.off
		}
		j.step, j.sum = 1, [2]uint64{}
		return j.probeOff(1)
	}
	// The window that ended was the probe's window number step.
	inMode := (j.step-1)%(pollSettle+pollCount) >= pollSettle
	if inMode {
		if j.probeOff(j.step) {
			j.sum[0] += s.events
		} else {
			j.sum[1] += s.events
		}
	}
	if j.step < 2*(pollSettle+pollCount) {
		j.step++
		return j.probeOff(j.step)
	}
	j.step = 0
	margin := pollMargin
	if j.off {
		margin = pollMarginOn
	}
	off := float64(j.sum[1]) <= float64(j.sum[0])*(1+margin)
	if off == j.off {
		j.every = min(2*j.every, pollMax)
	} else {
		j.off, j.every = off, pollFirst
	}
	j.wait = j.every
	return j.off
}
