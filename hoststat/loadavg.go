package hoststat

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LoadWindows are the intervals LoadAverages keeps, BIG-IP's for the
// iRule command cpu usage (5secs, 1min, 5mins).
var LoadWindows = [3]time.Duration{5 * time.Second, time.Minute, 5 * time.Minute}

// LoadAverages keeps ltmd's processor load as exponentially weighted
// moving averages over LoadWindows, as a percent of all the host's
// processors: BIG-IP's TMM load for cpu usage, ltmd being openltm's
// TMM. Sample takes a reading (the daemon's sampler calls it once a
// second); Usage answers without a lock and takes a reading itself when
// none was taken for a second, so that it stays right without the
// sampler. The first figure measured seeds all three averages, so that
// a daemon busy from its start is not reported idle for minutes [M].
type LoadAverages struct {
	// Read is the process's processor time and the time it was read;
	// nil reads SelfCPU and the clock (tests give readings of their own).
	Read func() (cpu time.Duration, at time.Time)
	// Procs is how many processors the percent is a share of; 0 is
	// runtime.NumCPU.
	Procs int

	mu      sync.Mutex
	next    atomic.Int64     // unix nanoseconds after which Usage samples
	avg     [3]atomic.Uint64 // math.Float64bits of each window's average
	prevCPU time.Duration
	prevAt  time.Time
	seeded  bool
}

// Usage is the average over the window of LoadWindows nearest d (0
// until two readings were made).
func (l *LoadAverages) Usage(d time.Duration) float64 {
	if now := time.Now().UnixNano(); now >= l.next.Load() && l.mu.TryLock() {
		l.sampleLocked()
		l.mu.Unlock()
	}
	i := 0
	for k, w := range LoadWindows {
		if absDur(w-d) < absDur(LoadWindows[i]-d) {
			i = k
		}
	}
	return math.Float64frombits(l.avg[i].Load())
}

// Sample takes a reading and folds the load since the last one into the
// averages.
func (l *LoadAverages) Sample() {
	l.mu.Lock()
	l.sampleLocked()
	l.mu.Unlock()
}

func (l *LoadAverages) sampleLocked() {
	cpu, at, ok := readCPU(l.Read) // selfcpu.go
	if !ok {
		return
	}
	l.next.Store(at.UnixNano() + int64(time.Second))
	if !l.prevAt.IsZero() && at.After(l.prevAt) && cpu >= l.prevCPU {
		procs := l.Procs
		if procs <= 0 {
			procs = runtime.NumCPU()
		}
		dt := at.Sub(l.prevAt)
		p := min(100*float64(cpu-l.prevCPU)/float64(dt)/float64(procs), 100)
		for i, w := range LoadWindows {
			v := p
			if l.seeded {
				old := math.Float64frombits(l.avg[i].Load())
				// The exact decay for an interval of any length, so
				// that late or missed readings weigh what they span.
				v = old + (p-old)*(1-math.Exp(-float64(dt)/float64(w)))
			}
			l.avg[i].Store(math.Float64bits(v))
		}
		l.seeded = true
	}
	l.prevCPU, l.prevAt = cpu, at
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
