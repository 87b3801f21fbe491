package dataplane

import "net/netip"

// target is a member a rule named for one choice (`pool p member a p`):
// it is taken before persistence and load balancing while its
// availability is no worse than accept.
type target struct {
	addr   netip.AddrPort // invalid: no member named
	accept avail
}

// chooser is how one data path takes the member chosen for it.
type chooser struct {
	// mode replaces the pool's load-balancing mode (LB::mode); nil keeps it.
	mode *lbModeSpec
	// avoid are members passed over while another member can take the
	// flow (members that just failed a connect).
	avoid []*memberRT
	// reserve counts the new connection on the member and its node, within
	// their connection limits (the L4 engines); a member whose limit was
	// reached meanwhile is not taken. Message-based balancing counts
	// messages instead and takes every member chosen.
	reserve bool
	// override lets a persisted member pass its limits
	// (override-connection-limit).
	override bool
}

// take counts a new connection on m as how says.
func (how *chooser) take(m *memberRT, persisted bool) bool {
	switch {
	case !how.reserve:
		return true
	case persisted && how.override:
		m.reserveOverride()
		return true
	}
	return m.reserve()
}

// chosenBy says which rule of choose chose a member.
type chosenBy uint8

const (
	byName chosenBy = iota
	byPersistence
	byBalancing
)

// choose is the member choice of every data path: the member a rule
// named, else the one a persistence record sends the client to
// (persisted, called only when needed; nil for none; it may lead to
// another pool), else the pool's load balancing. Members in exclude
// (already failed this flow or message) are never chosen. It returns the
// member, the pool it belongs to and the rule that chose it; nil when
// none is available, or when the named member cannot be taken.
func choose(pool *poolRT, t target, persisted func() (*poolRT, *memberRT), exclude []*memberRT, how chooser) (*memberRT, *poolRT, chosenBy) {
	if t.addr.IsValid() {
		if m := memberAt(pool, t.addr); m != nil && !containsMember(exclude, m) && m.availability() <= t.accept {
			if how.take(m, false) {
				return m, pool, byName
			}
			return nil, pool, byName
		}
	}
	if persisted != nil {
		if q, m := persisted(); m != nil && !containsMember(exclude, m) && how.take(m, true) {
			return m, q, byPersistence
		}
	}
	for guard := 0; guard < 4; guard++ {
		m := pool.pickAvoiding(exclude, how.avoid, how.mode)
		if m == nil {
			return nil, pool, byBalancing
		}
		if how.take(m, false) {
			return m, pool, byBalancing
		}
		// A limit was reached meanwhile: choose again.
	}
	return nil, pool, byBalancing
}

// pickAvoiding is the pool's load balancing without exclude, and without
// avoid too while some other member can take the flow.
func (p *poolRT) pickAvoiding(exclude, avoid []*memberRT, mode *lbModeSpec) *memberRT {
	if len(avoid) > 0 {
		with := make([]*memberRT, 0, len(exclude)+len(avoid))
		with = append(append(with, exclude...), avoid...)
		if m := p.pickWith(with, mode); m != nil {
			return m
		}
	}
	return p.pickWith(exclude, mode)
}

// memberAt finds a pool's member by address; port 0 matches any port.
func memberAt(pool *poolRT, a netip.AddrPort) *memberRT {
	s := pool.snap.Load()
	if s == nil {
		return nil
	}
	for _, m := range s.members {
		ma := m.cfg.Load().Addr
		if ma.Addr() == a.Addr() && (a.Port() == 0 || ma.Port() == a.Port()) {
			return m
		}
	}
	return nil
}

func containsMember(list []*memberRT, m *memberRT) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}
