package dataplane

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/l4"
)

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

// RuleCloneLate reports whether a rule's clone pool on v may start after
// CLIENT_ACCEPTED, in CLIENT_DATA, LB_SELECTED, LB_FAILED or
// SERVER_CONNECTED (a plain TCP virtual, whose client bytes one copy
// loop reads), so that the daemon warns at commit of the clones the
// dataplane skips.
func RuleCloneLate(v *Virtual) bool { return v.Protocol != ProtoUDP && l4.LateClonable(v) }
