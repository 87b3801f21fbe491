package dataplane

// LoopLoads is the client connections each event loop of the L4 engine
// serves now, one figure per loop, in the loops' order: openltm's
// counterpart of BIG-IP's TMM instances, for show sys tmm-info. It is
// empty until the first listener starts the loops. The loops are started
// under p.mu, so reading them does not race with their start.
func (p *Plane) LoopLoads() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l4.LoopLoads()
}
