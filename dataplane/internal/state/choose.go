package state

import "net/netip"

// Target is a member a rule named for one choice (`pool p member a p`):
// it is taken before persistence and load balancing while its
// availability is no worse than accept.
type Target struct {
	Addr   netip.AddrPort // invalid: no member named
	Accept Avail
}

// Chooser is how one data path takes the member chosen for it.
type Chooser struct {
	// Mode replaces the pool's load-balancing Mode (LB::Mode); nil keeps it.
	Mode *ModeSpec
	// Avoid are members passed over while another member can take the
	// flow (members that just failed a connect).
	Avoid []*Member
	// Reserve counts the new connection on the member and its node, within
	// their connection limits (the L4 engines); a member whose limit was
	// reached meanwhile is not taken. Message-based balancing counts
	// messages instead and takes every member chosen.
	Reserve bool
	// Override lets a persisted member pass its limits
	// (Override-connection-limit).
	Override bool
	// Room, when set, decides whether a member's connection limit lets
	// the balancing choose it (PickWith).
	Room func(*Member) bool
	// Limits are a rule's own connection limits for this decision
	// (LB::connlimit); the zero value sets none.
	Limits RuleLimits
	// Holds are the connection's keyed counts (keylimit.go), which the
	// member taken under keyed Limits moves to it; nil with no key.
	Holds *KeyHolds
}

// RuleLimits are the connection limits a rule sets for its connection's
// decisions (LB::connlimit), on top of the configured ones: a member with
// Member current connections or more, or whose node has Node or more, is
// not chosen; Virtual fails the choice while the virtual holds more than
// that many connections. 0 sets no limit.
type RuleLimits struct {
	Virtual, Node, Member int64
	// VirtualKey, NodeKey and MemberKey, when set, count the limit of
	// the same name per key (LB::connlimit ... key K): only the
	// connections balanced with that key count toward it (keylimit.go).
	VirtualKey, NodeKey, MemberKey string
}

// VirtualOver reports whether v holds more connections than the rule's
// virtual limit lets a connection be balanced with (the caller's own
// connection is among them). With a key, only the connections balanced
// with it count, and the connection's own joins them in h unless that
// makes more than the limit.
func (l *RuleLimits) VirtualOver(v *Virtual, h *KeyHolds) bool {
	if l.Virtual <= 0 {
		return false
	}
	if l.VirtualKey == "" || h == nil {
		return v.Stats.Cur.Load() > l.Virtual
	}
	return !h.holdVirtual(v, l.VirtualKey, l.Virtual)
}

// allow reports whether m is within the limits (a keyed limit counting
// the connections with its key, the connection's own in h aside;
// holdMember checks again as it takes m).
func (l *RuleLimits) allow(m *Member, h *KeyHolds) bool {
	if l.Member > 0 {
		n := m.Stats.Cur.Load()
		if l.MemberKey != "" {
			n = h.others(m, l.MemberKey)
		}
		if n >= l.Member {
			return false
		}
	}
	if l.Node > 0 {
		n := m.Node.Stats.Cur.Load()
		if l.NodeKey != "" {
			n = h.others(m.Node, l.NodeKey)
		}
		if n >= l.Node {
			return false
		}
	}
	return true
}

// withRuleLimits is how with its Room passing over the members the rule's
// limits keep out (the configured limits still apply); how itself when
// the rule set none, so that a decision without them costs a comparison.
func (how Chooser) withRuleLimits() Chooser {
	if how.Limits.Member == 0 && how.Limits.Node == 0 {
		return how
	}
	lim, room, h := how.Limits, how.Room, how.Holds
	how.Room = func(m *Member) bool {
		if !lim.allow(m, h) {
			return false
		}
		if room == nil {
			return !m.AtLimit()
		}
		return room(m)
	}
	return how
}

// take counts a new connection on m as how says; every path counts it
// within the member's and node's rate limits, which
// override-connection-limit does not lift.
func (how *Chooser) take(m *Member, persisted bool) bool {
	if how.Limits != (RuleLimits{}) && !how.Limits.allow(m, how.Holds) {
		return false
	}
	if !m.takeRate() {
		return false
	}
	switch {
	case !how.Reserve:
		return how.holdKeys(m, false)
	case persisted && how.Override:
		m.ReserveOverride()
		return how.holdKeys(m, true)
	}
	if !m.Reserve() {
		m.giveRate()
		return false
	}
	return how.holdKeys(m, true)
}

// holdKeys moves the connection's keyed counts to m, the member just
// taken; when another connection with the key took m's last room
// meanwhile, it gives back what take counted (reserved: a connection)
// and m is not taken.
func (how *Chooser) holdKeys(m *Member, reserved bool) bool {
	if how.Holds == nil || how.Holds.holdMember(m, &how.Limits) {
		return true
	}
	if reserved {
		m.Release()
	}
	m.giveRate()
	return false
}

// ChosenBy says which rule of Choose chose a member.
type ChosenBy uint8

const (
	ByName ChosenBy = iota
	ByPersistence
	ByBalancing
)

// Choose is the member choice of every data path: the member a rule
// named, else the one a persistence record sends the client to
// (persisted, called only when needed; nil for none; it may lead to
// another pool), else the pool's load balancing. Members in exclude
// (already failed this flow or message) are never chosen. It returns the
// member, the pool it belongs to and the rule that chose it; nil when
// none is available, or when the named member cannot be taken.
func Choose(pool *Pool, t Target, persisted func() (*Pool, *Member), exclude []*Member, how Chooser) (*Member, *Pool, ChosenBy) {
	if how.Limits != (RuleLimits{}) {
		how = how.withRuleLimits()
	}
	if t.Addr.IsValid() {
		if m := MemberAt(pool, t.Addr); m != nil && !containsMember(exclude, m) && m.Availability() <= t.Accept {
			if how.take(m, false) {
				return m, pool, ByName
			}
			return nil, pool, ByName
		}
	}
	if persisted != nil {
		if q, m := persisted(); m != nil && !containsMember(exclude, m) && how.take(m, true) {
			return m, q, ByPersistence
		}
	}
	for guard := 0; guard < 4; guard++ {
		m := pool.pickAvoiding(exclude, how.Avoid, how.Mode, how.Room)
		if m == nil {
			return nil, pool, ByBalancing
		}
		if how.take(m, false) {
			return m, pool, ByBalancing
		}
		// A limit was reached meanwhile: choose again.
	}
	return nil, pool, ByBalancing
}

// pickAvoiding is the pool's load balancing without exclude, and without
// avoid too while some other member can take the flow.
func (p *Pool) pickAvoiding(exclude, avoid []*Member, mode *ModeSpec, room func(*Member) bool) *Member {
	if len(avoid) > 0 {
		with := make([]*Member, 0, len(exclude)+len(avoid))
		with = append(append(with, exclude...), avoid...)
		if m := p.PickWith(with, mode, room); m != nil {
			return m
		}
	}
	return p.PickWith(exclude, mode, room)
}

// MemberAt finds a pool's member by address; port 0 matches any port.
func MemberAt(pool *Pool, a netip.AddrPort) *Member {
	s := pool.Snap.Load()
	if s == nil {
		return nil
	}
	for _, m := range s.Members {
		ma := m.Cfg.Load().Addr
		if ma.Addr() == a.Addr() && (a.Port() == 0 || ma.Port() == a.Port()) {
			return m
		}
	}
	return nil
}

func containsMember(list []*Member, m *Member) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}
