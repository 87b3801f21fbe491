//go:build !race

package dataplane

const raceOn = false
