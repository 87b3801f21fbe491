package state

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/config"
)

// CloneSet resolves a virtual's clone pools for one commit: each pool's
// members are chosen by its own load balancing, within monitors and
// connection limits, and a clone connection counts on the member, its
// node and the pool like any other (show ltm pool). nil when the virtual
// has none, which is all its data paths then look at.
func (vs *Virtual) CloneSet(cfg *config.Virtual, pools map[string]*Pool, connectTimeout time.Duration) *clone.Set {
	if len(cfg.Clone) == 0 {
		return nil
	}
	s := &clone.Set{Counters: &vs.Clone, ConnectTimeout: connectTimeout}
	for _, cp := range cfg.Clone {
		p := pools[cp.Pool]
		if p == nil {
			continue // translation checked it; a pool gone meanwhile clones nothing
		}
		s.Targets = append(s.Targets, cloneTarget(p, cp.Server, cfg.Destination.Port()))
	}
	return s
}

// cloneTarget chooses clone members of p; a member on port 0 (any) gets
// the virtual's port.
func cloneTarget(p *Pool, server bool, port uint16) clone.Target {
	return clone.Target{Server: server, Pick: func() (clone.Dest, bool) {
		return ClonePick(p, Target{}, port)
	}}
}

// ClonePick chooses a clone member of p as a virtual's clone pools do
// (t names one, or none for the pool's load balancing), counting the
// clone connection on it, its node and the pool: a rule's clone command
// shares it. ok is false when no member can take the connection; a
// member on port 0 (any) gets port.
func ClonePick(p *Pool, t Target, port uint16) (d clone.Dest, ok bool) {
	m, _, _ := Choose(p, t, nil, nil, Chooser{Reserve: true})
	if m == nil {
		return clone.Dest{}, false
	}
	a := m.Cfg.Load().Addr
	if a.Port() == 0 {
		a = netip.AddrPortFrom(a.Addr(), port)
	}
	p.Stats.TryOpen(0)
	p.Stats.Requests.Add(1)
	m.Stats.Requests.Add(1)
	m.Node.Stats.Requests.Add(1)
	return clone.Dest{Addr: a,
		Sent: func(n int) {
			pk := Packets(n)
			m.Stats.Out(n, pk)
			p.Stats.Out(n, pk)
			m.Node.Stats.Out(n, pk)
		},
		Done: func(connected bool) {
			if connected {
				m.ConnectSucceeded()
			} else {
				m.ConnectFailed()
			}
			m.Release()
			p.Stats.Close()
		}}, true
}

// RuleCloneDest is the clone member of a rule's clone pool command, the
// same on every kind of virtual that takes it: p's load balancing
// choice, or member when valid, taken whatever its monitor says, as F5
// documents (https://clouddocs.f5.com/api/irules/clone.html); a member
// forced offline or at its connection limit gets no copy [M]. ok false:
// none to copy to (the caller counts a drop); err: member is not in p.
func RuleCloneDest(p *Pool, member netip.AddrPort, port uint16) (d clone.Dest, ok bool, err error) {
	t := Target{}
	if member.IsValid() {
		m := MemberAt(p, member)
		if m == nil {
			return clone.Dest{}, false, fmt.Errorf("no such member %s in pool %s", member, p.Name)
		}
		if m.Availability() > AvailDown {
			return clone.Dest{}, false, nil // forced offline
		}
		t = Target{Addr: member, Accept: AvailDown}
	}
	d, ok = ClonePick(p, t, port)
	return d, ok, nil
}

// RuleClone is a rule's clone pool command on a connection of vs (its
// name in the pool index ps is virtual), the same on every kind of
// virtual that takes it: the set the copy counts on (the virtual's clone
// pools', else one on the virtual's own counters) and the member to copy
// to (RuleCloneDest). ok false: no copy, counted here as dropped when
// err is nil; err: the pool or the member does not exist (the rule's
// error).
func RuleClone(ps Pools, vs *Virtual, snap *VirtualSnap, virtual, pool string, member netip.AddrPort) (set *clone.Set, d clone.Dest, ok bool, err error) {
	p := ps.Named(virtual, pool)
	if p == nil {
		return nil, clone.Dest{}, false, fmt.Errorf("no such pool: %s", pool)
	}
	set = snap.Clone
	if set == nil {
		set = &clone.Set{Counters: &vs.Clone}
	}
	if d, ok, err = RuleCloneDest(p, member, snap.Cfg.Destination.Port()); err == nil && !ok {
		set.Counters.Dropped.Add(1)
	}
	return set, d, ok, err
}
