//go:build !race

package mblb

// raceOn: allocation counts mean nothing under the race detector.
const raceOn = false
