//go:build race

package dataplane

// raceOn: the race detector slows every datagram tenfold; tests of
// tens of thousands of round trips leave it out.
const raceOn = true
