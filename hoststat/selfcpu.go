package hoststat

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// SelfCPU is the processor time ltmd has used since it started, user and
// system together: the ground of a load figure for ltmd alone, which is
// what BIG-IP's cpu-saver watches (TMM's own load, not the host's).
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// A CPUMeter says how busy ltmd has been lately, as a percent of all the
// host's processors (100: every processor busy with ltmd), measured over
// at least Every between readings. Callers on a data path ask it often:
// it reads the clock and the process's times only when Every has passed
// since the last reading, and answers the last figure otherwise, without
// a lock.
type CPUMeter struct {
	// Read is the process's processor time now and the time it was
	// read; nil reads SelfCPU and the clock. A test hands it readings of
	// its own instead of loading the machine.
	Read func() (cpu time.Duration, at time.Time)
	// Every is the shortest time between readings.
	Every time.Duration
	// Procs is how many processors the percent is a share of; 0 is
	// runtime.NumCPU.
	Procs int

	mu      sync.Mutex    // taken by the one caller that reads; others answer the last figure
	next    atomic.Int64  // unix nanoseconds after which the next reading is due
	percent atomic.Uint64 // math.Float64bits of the last figure
	prevCPU time.Duration
	prevAt  time.Time
}

// Percent is the process's load over the last interval measured; 0 until
// two readings were made.
func (m *CPUMeter) Percent() float64 {
	if now := time.Now().UnixNano(); now >= m.next.Load() && m.mu.TryLock() {
		m.next.Store(now + int64(m.Every))
		m.sample()
		m.mu.Unlock()
	}
	return math.Float64frombits(m.percent.Load())
}

// sample takes a reading and, with the one before, the figure.
func (m *CPUMeter) sample() {
	cpu, at, ok := readCPU(m.Read)
	if !ok {
		return
	}
	if !m.prevAt.IsZero() && at.After(m.prevAt) && cpu >= m.prevCPU {
		procs := m.Procs
		if procs <= 0 {
			procs = runtime.NumCPU()
		}
		p := 100 * float64(cpu-m.prevCPU) / float64(at.Sub(m.prevAt)) / float64(procs)
		m.percent.Store(math.Float64bits(min(p, 100)))
	}
	m.prevCPU, m.prevAt = cpu, at
}

// readCPU is read's reading, or, when read is nil (as outside tests),
// the process's own processor time and now; false when it cannot be read.
func readCPU(read func() (time.Duration, time.Time)) (cpu time.Duration, at time.Time, ok bool) {
	if read != nil {
		cpu, at = read()
		return cpu, at, true
	}
	c, err := SelfCPU()
	if err != nil {
		return 0, time.Time{}, false
	}
	return c, time.Now(), true
}
