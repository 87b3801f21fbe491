package mblbvs

import (
	"net"
	"net/netip"

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

// serverFDOpts marks a new member socket of the event loops with its
// pool's ToS (the server side was set before the connect:
// rawsock.DialSide).
func serverFDOpts(m mblb.Member, fd int) {
	if ps := memberPool(m); ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.Apply(fd)
	}
}

// serverOpts marks a new member connection of the goroutine engine with
// its pool's ToS.
func (mv *VS) serverOpts(m mblb.Member, c *net.TCPConn) {
	if ps := memberPool(m); ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.ApplyConn(c)
	}
}

// dialSide connects a member connection of the goroutine engine with the
// virtual's server side set before its SYN (Env.DialSide), or right
// after the connect when the plane gives no DialSide.
func (mv *VS) dialSide(snap *state.VirtualSnap, src, dst netip.AddrPort) (*net.TCPConn, error) {
	if mv.env.DialSide != nil {
		return mv.env.DialSide(src, dst, snap.Cfg.ServerTCP)
	}
	c, err := mv.env.Dial(src, dst)
	if err == nil {
		snap.Cfg.ServerTCP.ApplyConn(c)
	}
	return c, err
}

// idleReset is the engine's IdleReset: reset-on-timeout as the virtual's
// running configuration says.
func (mv *VS) idleReset() bool {
	snap := mv.vs.Snap.Load()
	return snap == nil || !snap.Cfg.IdleFIN
}
