package evloop

// Governed says what the governor decides (Govern): the processor count
// (procs.go; nothing to govern below two processors, nor when the
// GOMAXPROCS environment variable fixed the count) and whether loops
// busy-poll (polljudge.go; loops poll only if SetBusyPoll gave them a
// time). Off Linux there are no event loops, and nothing to decide.
type Governed struct {
	Procs, Polling bool
}
