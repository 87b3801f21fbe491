package dataplane

import (
	"github.com/openltm/openltm/dataplane/internal/state"
)

// What the rules of the L4 flows ask of the plane beyond the pool index
// (state.Pools answers pool names, LB::status and active_members).

// rulePools is the running commit's pool index (state.Pools), read per flow.
func (p *Plane) rulePools() state.Pools { return *p.poolIndex.Load() }
