package daemon

import (
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
)

// flowSwitch is the rules' FLOWTABLE:: view of the connection table, set
// once a dataplane is attached: rules (the GSLB's DNS rules among them)
// may run before that, and read it without a lock.
type flowSwitch struct {
	p atomic.Pointer[dataplane.Plane]
}

// Flows implements rules.FlowTable: 0 before a dataplane is attached.
func (s *flowSwitch) Flows() int {
	if p := s.p.Load(); p != nil {
		return p.Flows()
	}
	return 0
}

// VirtualFlows implements rules.FlowTable.
func (s *flowSwitch) VirtualFlows(name string) (count, limit int, ok bool) {
	if p := s.p.Load(); p != nil {
		return p.VirtualFlows(name)
	}
	return 0, 0, false
}
