package mblbvs

import "net/netip"

// poolPick is the member of pool that its load-balancing method and its
// monitors choose now, for the ICAP exchanges of adapt profiles: the
// internal virtual server's pool is balanced as any other.
func (s *Set) poolPick(pool string) (netip.AddrPort, bool) {
	ps := s.env.Pools()
	if ps == nil {
		return netip.AddrPort{}, false
	}
	q := ps.Named("", pool)
	if q == nil {
		return netip.AddrPort{}, false
	}
	m := q.Pick(nil, nil)
	if m == nil {
		return netip.AddrPort{}, false
	}
	return m.Cfg.Load().Addr, true
}
