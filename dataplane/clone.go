package dataplane

import "github.com/openltm/openltm/dataplane/internal/config"

// ClonePool is one of a virtual's clone-pools, as the daemon translates it.
type ClonePool = config.ClonePool

// CloneStats is what a virtual's clone pools got, summed over them:
// openltm's own rows of show ltm virtual (the pools' own counts are in
// show ltm pool).
type CloneStats struct {
	// Conns counts clone connections opened, Bytes what they carried.
	Conns, Bytes uint64
	// Dropped counts copies given up: no clone member available, its
	// connect failed, or it was slower than the traffic.
	Dropped uint64
}
