package dataplane

// Flows is the number of client connections in the connection table
// (FLOWTABLE::count without arguments).
func (p *Plane) Flows() int { return p.ConnectionCount() }

// VirtualFlows is a virtual server's current client connections and its
// connection limit (0: none), what FLOWTABLE::count virtual and
// FLOWTABLE::limit virtual read; ok is false when no virtual server has
// that full name.
func (p *Plane) VirtualFlows(name string) (count, limit int, ok bool) {
	v := p.virtualNamed(name)
	if v == nil {
		return 0, 0, false
	}
	if s := v.Snap.Load(); s != nil && s.Cfg != nil {
		limit = s.Cfg.ConnectionLimit
	}
	return int(max(v.Stats.Cur.Load(), 0)), limit, true
}
