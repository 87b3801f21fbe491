package l4

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// LB_SELECTED on a Diameter flow. The client's first message goes
// through the L4 connect, where LB_SELECTED runs and its decision is
// followed as on any TCP flow; every later request is balanced by
// itself (pick), and LB_SELECTED runs for each of those choices too,
// as BIG-IP runs it for each load-balancing decision of a message-based
// virtual [M]. A `pool`, `pool … member`, `node` or `LB::reselect` there
// sends that request to the new target (a member connection the flow
// has, else one opened and sent the client's CER, as pick does), and
// LB_SELECTED runs again for the new choice, where LB::server names it;
// up to three rounds, then the last choice stands, as on the L4 path.

// A pool, member or node decision in a client's request's
// DIAMETER_INGRESS sends that request there (pickWanted), as one in
// HTTP_REQUEST sends an HTTP request: the request goes to the node, the
// member, or the member its pool chooses, and a pool (with a member or
// without) becomes the flow's pool for its later requests too, as a
// decision in HTTP_REQUEST becomes the connection's current target [M];
// LB_SELECTED then runs for the choice. Before, the flow's later
// requests were balanced in the pool of its first message, whatever the
// rule decided.

// diamTarget is a decision a client's DIAMETER_INGRESS made.
type diamTarget struct {
	set  bool
	pool *state.Pool
	addr netip.AddrPort
	node bool
}

// pickWanted is pick for a client's request whose DIAMETER_INGRESS
// decided where it goes (x.want), under pickMu on the client's reader:
// the target's connection (opened when the flow has none), then
// LB_SELECTED; the persistence record follows the member chosen (a node
// keeps none) [M].
func (x *diamFlow) pickWanted(key []byte) *diamPeer {
	w := x.want
	x.want = diamTarget{}
	addr := w.addr
	if w.node && addr.Port() == 0 {
		addr = netip.AddrPortFrom(addr.Addr(), x.pr.Local.Port()) // as dialDirect
	}
	pool := w.pool
	if !w.node && pool != nil {
		x.pool = pool // the flow's pool from now on
	}
	if !w.node && pool == nil {
		pool = x.pool
	}
	p := x.peerFor(pool, addr, w.node, nil)
	if p == nil {
		return nil
	}
	if key != nil {
		if p.sc.member != nil {
			x.table.Save(key, p.sc.member.Cfg.Load().Addr, persistTTL, time.Now())
		} else {
			x.table.Forget(key)
		}
	}
	if x.lbsel {
		return x.selected(p, key, nil)
	}
	return p
}

// maxDiamLBRounds bounds how often LB_SELECTED may send one request
// elsewhere, as the L4 connect bounds its rounds (ruleState.lbRounds).
const maxDiamLBRounds = 3

// selected runs LB_SELECTED for p, the member connection chosen for one
// request (key: its persistence key; avoid: the connection that failed
// it), and follows a decision made there. nil when the flow ended in
// the event or the rule's target cannot take the request.
func (x *diamFlow) selected(p *diamPeer, key []byte, avoid *diamPeer) *diamPeer {
	pr, rs := x.pr, x.pr.rs
	moved := false
	for round := 0; ; round++ {
		rs.mu.Lock()
		rs.pick, rs.Changed = lbPick{pool: p.sc.pool, addr: p.sc.leg.Server}, false
		rs.eachRequest = true // (a clone the flow has goes on: clone.go)
		rs.mu.Unlock()
		ok := pr.runEvent(config.EventLBSelected)
		rs.mu.Lock()
		rs.pick, rs.eachRequest = lbPick{}, false
		changed, pool, addr, node := rs.Changed, rs.Pool, rs.Addr, rs.Node
		rs.mu.Unlock()
		if !ok {
			return nil
		}
		if node && addr.Port() == 0 {
			addr = netip.AddrPortFrom(addr.Addr(), pr.Local.Port()) // as dialDirect
		}
		if !node && pool == nil {
			pool, addr = x.pool, netip.AddrPort{} // a bare LB::reselect: the flow's pool
		}
		if !changed || round == maxDiamLBRounds || x.holds(p, pool, addr, node) {
			break
		}
		np := x.peerFor(pool, addr, node, avoid)
		if np == nil || np == avoid {
			return nil
		}
		p, moved = np, true
	}
	if moved && key != nil {
		// The persistence record follows the member the request went
		// to; a node keeps none, as on the L4 path [M].
		if p.sc.member != nil {
			x.table.Save(key, p.sc.member.Cfg.Load().Addr, persistTTL, time.Now())
		} else {
			x.table.Forget(key)
		}
	}
	return p
}

// holds reports whether the target a rule named is p's already: its
// node, its pool member, or a pool its member is in [M: no new balancing
// then, as on message-based virtuals].
func (x *diamFlow) holds(p *diamPeer, pool *state.Pool, addr netip.AddrPort, node bool) bool {
	m := p.sc.member
	if node {
		return m == nil && p.sc.leg.Server == addr
	}
	return m != nil && p.sc.pool == pool && (!addr.IsValid() || m.Cfg.Load().Addr == addr)
}

// peerFor is the flow's connection to a rule's target, opened when the
// flow has none: the node at addr, the member of pool at addr, or the
// member pool's balancing chooses (avoid's member excluded); nil when
// none can be had.
func (x *diamFlow) peerFor(pool *state.Pool, addr netip.AddrPort, node bool, avoid *diamPeer) *diamPeer {
	if node {
		if p := x.nodePeer(addr); p != nil {
			return p
		}
		return x.dialNode(addr)
	}
	var failed []*state.Member
	if avoid != nil && avoid.sc.member != nil {
		failed = append(failed, avoid.sc.member)
	}
	t := state.Target{}
	if addr.IsValid() {
		t = state.Target{Addr: addr, Accept: state.AvailDown} // a member the rule named: taken unless forced offline, as on L4
	}
	for range 4 {
		m, _, _ := state.Choose(pool, t, nil, failed, state.Chooser{Mode: x.pr.modeOverride()})
		if m == nil {
			return nil
		}
		if p := x.peerOf(m); p != nil {
			return p
		}
		if p := x.dial(m, pool); p != nil {
			return p
		}
		if addr.IsValid() {
			return nil
		}
		failed = append(failed, m)
	}
	return nil
}

// nodePeer is the flow's live connection to node addr (no member), nil
// when it has none.
func (x *diamFlow) nodePeer(addr netip.AddrPort) *diamPeer {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.peers {
		if !p.dead.Load() && p.sc.member == nil && p.sc.leg.Server == addr {
			return p
		}
	}
	return nil
}

// dialNode opens a connection to a node a rule named for this flow (no
// pool, no member accounting, as the L4 path's dialDirect) and sends it
// the client's CER; nil when it cannot be opened.
func (x *diamFlow) dialNode(a netip.AddrPort) *diamPeer {
	pr := x.pr
	if pr.ended.Load() {
		return nil
	}
	release := pr.e.passOver(a, false)      // as dialDirect: a destination a wildcard may steer
	c, t, hold, err := pr.dialExtra(a, nil) // lsn.go
	release()
	if err != nil {
		return nil // dialExtra gave back what it held
	}
	s := &serverConn{conn: c, xlat: t, snat: hold}
	s.leg = flows.Leg{Client: rawsock.AddrPortOf(c.LocalAddr()), Server: a}
	return x.join(s)
}
