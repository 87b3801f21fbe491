package dataplane

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// What the rules of every data path ask of the plane, answered once:
// names resolved as a rule writes them, LB::status, active_members and
// LB::select.

// poolNamed resolves a pool name as a rule of virtual writes it: a full
// path, or a bare name in the virtual's partition, then in /Common.
func (p *Plane) poolNamed(virtual, name string) *state.Pool {
	idx := *p.poolIndex.Load()
	if q := idx[name]; q != nil {
		return q
	}
	if strings.HasPrefix(name, "/") {
		return nil
	}
	if i := strings.LastIndexByte(virtual, '/'); i > 0 {
		if q := idx[virtual[:i+1]+name]; q != nil {
			return q
		}
	}
	return idx["/Common/"+name]
}

// snatPoolNamed resolves a snatpool name: a full path, or a bare name in
// /Common.
func (p *Plane) snatPoolNamed(name string) ([]netip.Addr, bool) {
	cfg := p.running.Load()
	if cfg == nil {
		return nil, false
	}
	for _, n := range []string{name, "/Common/" + name} {
		if a, ok := cfg.SnatPools[n]; ok {
			return a, true
		}
		if strings.HasPrefix(name, "/") {
			break
		}
	}
	return nil, false
}

// memberStatus is LB::status for a member of a pool named by a rule of
// virtual.
func (p *Plane) memberStatus(virtual, pool string, member netip.AddrPort) (string, error) {
	q := p.poolNamed(virtual, pool)
	if q == nil {
		return "", fmt.Errorf("no such pool: %s", pool)
	}
	m := state.MemberAt(q, member)
	if m == nil {
		return "", fmt.Errorf("no such member %s in pool %s", member, q.Name)
	}
	return m.Availability().StatusWord(), nil
}

// nodeStatus is LB::status for a node, found through the members on it.
func (p *Plane) nodeStatus(a netip.Addr) (string, error) {
	for _, pool := range *p.poolIndex.Load() {
		if m := state.MemberAt(pool, netip.AddrPortFrom(a, 0)); m != nil {
			return m.Node.Availability().StatusWord(), nil
		}
	}
	return "", fmt.Errorf("no such node: %s", a)
}

// activeMembers is active_members: the members load balancing may choose.
func (p *Plane) activeMembers(virtual, pool string) ([]netip.AddrPort, error) {
	q := p.poolNamed(virtual, pool)
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

// lbSelect is LB::select: the member load balancing would choose now in
// pool (mode nil: the pool's), without taking it.
func lbSelect(pool *state.Pool, mode *state.ModeSpec) (string, netip.AddrPort, error) {
	if pool == nil {
		return "", netip.AddrPort{}, errors.New("no pool selected")
	}
	m := pool.Pick(nil, mode)
	if m == nil {
		return "", netip.AddrPort{}, fmt.Errorf("no member of pool %s is available", pool.Name)
	}
	return pool.Name, m.Cfg.Load().Addr, nil
}
