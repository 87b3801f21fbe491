//go:build !linux

package evloop

import "runtime"

// Procs is the number of processors to size per-processor work by:
// GOMAXPROCS, as there are no event loops (and no governor) off Linux.
func Procs() int { return runtime.GOMAXPROCS(0) }

// Govern does nothing off Linux, where there are no event loops.
func Govern(Governed) {}

// StopGoverning does nothing off Linux.
func StopGoverning() {}

// PollingOff is false off Linux: there is no judge of polling.
func PollingOff() bool { return false }

// SetHolding does nothing off Linux: there are no event loops to hold.
func SetHolding(bool) {}

// HoldsStarted is 0 off Linux: no loop holds.
func HoldsStarted() uint64 { return 0 }

// BatchedSends is 0 off Linux: there are no event loops to batch sends.
func BatchedSends() uint64 { return 0 }

// SetSendBatching does nothing off Linux: there are no event loops.
func SetSendBatching(bool) {}
