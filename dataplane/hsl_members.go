package dataplane

import "net/netip"

// PoolAvailable lists the members of a pool that may take traffic now
// (the pool named as a rule writes it: a full path, or a bare name in
// /Common); high-speed logging balances its messages over them.
func (p *Plane) PoolAvailable(pool string) ([]netip.AddrPort, error) {
	return p.rulePools().ActiveMembers("", pool)
}
