package dataplane

import "github.com/openltm/openltm/dataplane/mblb"

// Message-based load balancing runs in dataplane/internal/mblbvs; these
// are its shows.

// OneConnectStats sums `show ltm profile one-connect` for one profile
// over the message-balanced virtuals using it; ok is false when none does.
func (p *Plane) OneConnectStats(profile string) (mblb.OneConnectStats, bool) {
	return p.mblbs.OneConnectStats(profile)
}

// MBLBStats are a message-balanced virtual's engine counters.
type MBLBStats = mblb.Stats

// MBLBStats returns the engine counters of a message-balanced virtual.
func (p *Plane) MBLBStats(virtual string) (MBLBStats, bool) { return p.mblbs.Stats(virtual) }

// MBLBProfileStats sums the engine counters of the message-balanced
// virtuals using one mblb profile; ok is false when none does.
func (p *Plane) MBLBProfileStats(profile string) (MBLBStats, bool) {
	return p.mblbs.ProfileStats(profile)
}
