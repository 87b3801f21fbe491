package dataplane

import (
	"github.com/openltm/openltm/dataplane/evict"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// EvictionPolicy is an ltm eviction-policy as a virtual acts on it.
type EvictionPolicy = evict.Policy

// EvictionLowPort is one low-priority-port entry of a policy.
type EvictionLowPort = evict.LowPort

// evictorOf is the eviction a virtual with a flow-eviction-policy and a
// connection-limit does at its high-water mark (dataplane/evict); nil
// otherwise, so that its connections pay one nil check. The sweep walks
// this plane's connection table for the virtual's connections.
func (p *Plane) evictorOf(vc *Virtual) *state.Evictor {
	pol := vc.Eviction
	if pol == nil || vc.ConnectionLimit <= 0 {
		return nil
	}
	high, low := pol.Marks(vc.ConnectionLimit)
	name, table := vc.Name, p.table
	return &state.Evictor{High: high, Low: low, Sweep: func(high, low int) (int, int) {
		return pol.Sweep(table, name, high, low)
	}}
}
