package mblbvs

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// The tcp profile's socket settings and the pools' ip-tos-to-server on
// the member connections of message-balanced virtuals (the client's side
// is set where the client is taken: loop_linux.go, tlsloop_linux.go, and
// dataplane/internal/l4 for goroutine clients). Unconfigured, each costs
// a nil or zero test per connection.

// memberPool is the running configuration of m's pool, whose
// ip-tos-to-server marks m's connections; nil when m has none.
func memberPool(m mblb.Member) (ps *state.PoolSnap) {
	if sm, ok := m.Ref.(*state.Member); ok && sm.Pool != nil {
		ps = sm.Pool.Snap.Load()
	}
	return ps
}

// serverFDOpts sets a new member socket of the event loops.
func serverFDOpts(snap *state.VirtualSnap, m mblb.Member, fd int) {
	if s := snap.Cfg.ServerTCP; s != nil {
		s.Apply(fd)
	}
	if ps := memberPool(m); ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.Apply(fd)
	}
}

// serverOpts sets a new member connection of the goroutine engine.
func (mv *VS) serverOpts(snap *state.VirtualSnap, m mblb.Member, c *net.TCPConn) {
	if s := snap.Cfg.ServerTCP; s != nil {
		s.ApplyConn(c)
	}
	if ps := memberPool(m); ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.ApplyConn(c)
	}
}

// idleReset is the engine's IdleReset: reset-on-timeout as the virtual's
// running configuration says.
func (mv *VS) idleReset() bool {
	snap := mv.vs.Snap.Load()
	return snap == nil || !snap.Cfg.IdleFIN
}
