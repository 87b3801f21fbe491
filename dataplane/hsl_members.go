package dataplane

import "net/netip"

// PoolAvailable lists the members of a pool that may take traffic now
// (the pool named as a rule writes it: a full path, or a bare name in
// /Common); high-speed logging balances its messages over them.
func (p *Plane) PoolAvailable(pool string) ([]netip.AddrPort, error) {
	return p.rulePools().ActiveMembers("", pool)
}

// PoolPick is the member the pool's load-balancing method chooses now
// (without taking a connection on it), for high-speed logging, which
// BIG-IP balances by the pool's method.
func (p *Plane) PoolPick(pool string) (netip.AddrPort, bool) {
	q := p.rulePools().Named("", pool)
	if q == nil {
		return netip.AddrPort{}, false
	}
	m := q.Pick(nil, nil)
	if m == nil {
		return netip.AddrPort{}, false
	}
	return m.Cfg.Load().Addr, true
}
