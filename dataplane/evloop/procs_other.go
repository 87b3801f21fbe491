//go:build !linux

package evloop

import "runtime"

// Procs is the number of processors to size per-processor work by:
// GOMAXPROCS, as there are no event loops (and no governor) off Linux.
func Procs() int { return runtime.GOMAXPROCS(0) }

// Governed says what the governor decides (procs.go); off Linux there
// are no event loops, and nothing to decide.
type Governed struct {
	Procs, Polling bool
}

// Govern does nothing off Linux.
func Govern(Governed) {}

// StopGoverning does nothing off Linux.
func StopGoverning() {}
