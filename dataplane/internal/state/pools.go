package state

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Pools is one commit's pools by full path: what rules of every data path
// resolve names in and ask about (LB::status, active_members, LB::select).
// A published Pools is never modified.
type Pools map[string]*Pool

// Named resolves a pool name as a rule of virtual writes it: a full path,
// or a bare name in the virtual's partition, then in /Common.
func (ps Pools) Named(virtual, name string) *Pool {
	if q := ps[name]; q != nil {
		return q
	}
	if strings.HasPrefix(name, "/") {
		return nil
	}
	if i := strings.LastIndexByte(virtual, '/'); i > 0 {
		if q := ps[virtual[:i+1]+name]; q != nil {
			return q
		}
	}
	return ps["/Common/"+name]
}

// MemberStatus is LB::status for a member of a pool a rule of virtual
// names.
func (ps Pools) MemberStatus(virtual, pool string, member netip.AddrPort) (string, error) {
	m, err := ps.member(virtual, pool, member)
	if err != nil {
		return "", err
	}
	return m.Availability().StatusWord(), nil
}

// NodeStatus is LB::status for a node, found through the members on it.
func (ps Pools) NodeStatus(a netip.Addr) (string, error) {
	n, err := ps.node(a)
	if err != nil {
		return "", err
	}
	return n.Availability().StatusWord(), nil
}

// member is a member of a pool a rule of virtual names.
func (ps Pools) member(virtual, pool string, member netip.AddrPort) (*Member, error) {
	q := ps.Named(virtual, pool)
	if q == nil {
		return nil, fmt.Errorf("no such pool: %s", pool)
	}
	m := MemberAt(q, member)
	if m == nil {
		return nil, fmt.Errorf("no such member %s in pool %s", member, q.Name)
	}
	return m, nil
}

// node is the node at a, found through the members on it.
func (ps Pools) node(a netip.Addr) (*Node, error) {
	for _, pool := range ps {
		if m := MemberAt(pool, netip.AddrPortFrom(a, 0)); m != nil {
			return m.Node, nil
		}
	}
	return nil, fmt.Errorf("no such node: %s", a)
}

// Mark is LB::down (up false) and LB::up as every data path carries
// them out (Watch.Mark): no pool and no member is the flow's current
// member (nil: none chosen yet), no pool the node at member's address.
func (ps Pools) Mark(virtual, pool string, member netip.AddrPort, current *Member, up bool) error {
	var w *Watch
	switch {
	case pool == "" && !member.IsValid():
		if current == nil {
			return errors.New("no pool member selected")
		}
		w = current.Watch
	case pool == "":
		n, err := ps.node(member.Addr())
		if err != nil {
			return err
		}
		w = n.Watch
	default:
		m, err := ps.member(virtual, pool, member)
		if err != nil {
			return err
		}
		w = m.Watch
	}
	w.Mark(up)
	return nil
}

// ActiveMembers is active_members: the members load balancing may choose
// in a pool a rule of virtual names.
func (ps Pools) ActiveMembers(virtual, pool string) ([]netip.AddrPort, error) {
	q := ps.Named(virtual, pool)
	if q == nil {
		return nil, fmt.Errorf("no such pool: %s", pool)
	}
	var out []netip.AddrPort
	for _, m := range q.Snap.Load().Members {
		if m.Usable() {
			out = append(out, m.Cfg.Load().Addr)
		}
	}
	return out, nil
}

// LBSelect is LB::select: the member load balancing would choose now in
// pool (mode nil: the pool's), without taking it.
func LBSelect(pool *Pool, mode *ModeSpec) (string, netip.AddrPort, error) {
	if pool == nil {
		return "", netip.AddrPort{}, errors.New("no pool selected")
	}
	m := pool.Pick(nil, mode)
	if m == nil {
		return "", netip.AddrPort{}, fmt.Errorf("no member of pool %s is available", pool.Name)
	}
	return pool.Name, m.Cfg.Load().Addr, nil
}

// The rules' LBInfo questions (virtual name aside), answered alike for
// every data path: pool is the rule's argument, current the flow's pool
// when it gave none.

// poolFor is the pool a rule asks about.
func (ps Pools) poolFor(virtual, pool string, current *Pool) (*Pool, error) {
	if pool == "" {
		if current == nil {
			return nil, errors.New("no pool selected")
		}
		return current, nil
	}
	q := ps.Named(virtual, pool)
	if q == nil {
		return nil, fmt.Errorf("no such pool: %s", pool)
	}
	return q, nil
}

// LBMode is LB::mode without a mode: the pool's load-balancing mode as
// configured (round-robin when unset).
func (ps Pools) LBMode(virtual, pool string, current *Pool) (string, error) {
	q, err := ps.poolFor(virtual, pool, current)
	if err != nil {
		return "", err
	}
	if m := q.Snap.Load().Cfg.LBMode; m != "" {
		return string(m), nil
	}
	return string(config.RoundRobin), nil
}

// Members is members: every member of a pool, whatever its state.
func (ps Pools) Members(virtual, pool string, current *Pool) ([]netip.AddrPort, error) {
	q, err := ps.poolFor(virtual, pool, current)
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, m := range q.Snap.Load().Members {
		out = append(out, m.Cfg.Load().Addr)
	}
	return out, nil
}

// MemberInfo is what LB::server ratio, priority and weight report of a
// member: its ratio (1 when unset), priority group, and its weight, which
// for openltm's modes is the ratio the balancer uses.
func (ps Pools) MemberInfo(virtual, pool string, current *Pool, member netip.AddrPort) (ratio, priority, weight int, err error) {
	q, err := ps.poolFor(virtual, pool, current)
	if err != nil {
		return 0, 0, 0, err
	}
	m := MemberAt(q, member)
	if m == nil {
		return 0, 0, 0, fmt.Errorf("no such member %s in pool %s", member, q.Name)
	}
	c := m.Cfg.Load()
	ratio = max(c.Ratio, 1)
	return ratio, c.PriorityGroup, ratio, nil
}

// Queue is LB::queue: a pool's connection queue settings and depth.
func (ps Pools) Queue(virtual, pool string, current *Pool) (on bool, depthLimit, timeLimitMs, depth int, err error) {
	q, err := ps.poolFor(virtual, pool, current)
	if err != nil {
		return false, 0, 0, 0, err
	}
	cfg := q.Snap.Load().Cfg
	return cfg.QueueOnConnLimit, cfg.QueueDepthLimit, int(cfg.QueueTimeLimit / time.Millisecond), int(q.Queue.Stats().Depth), nil
}
