package l4

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// The tcp profile's socket settings and the pools' IP ToS on the sockets
// of L4 flows (dataplane/internal/sockopt): the client's side when the
// flow starts, the server side on each member connection. Unconfigured,
// each costs a nil or zero test.

// serverOpts marks a new member connection's socket with its pool's
// ip-tos-to-server; the virtual's server-side tcp profile was set before
// the connect (rawsock.DialSide, DialSide).
func serverOpts(ps *state.PoolSnap, fd int) {
	if ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.Apply(fd)
	}
}

// serverConnOpts is serverOpts on a connection of the net package.
func serverConnOpts(ps *state.PoolSnap, c *net.TCPConn) {
	if ps != nil && ps.Cfg.ToSServer.Set {
		ps.Cfg.ToSServer.ApplyConn(c)
	}
}

// ServerConnOpts sets a member connection of the message-based engine
// (dataplane/internal/mblbvs), whose member m may be nil, that was dialed
// without the server side: the side after the connect, then the pool's
// ToS.
func ServerConnOpts(cfg *config.Virtual, m *state.Member, c *net.TCPConn) {
	var ps *state.PoolSnap
	if m != nil && m.Pool != nil {
		ps = m.Pool.Snap.Load()
	}
	if s := cfg.ServerTCP; s != nil {
		s.ApplyConn(c)
	}
	serverConnOpts(ps, c)
}

// idleEnd ends a goroutine flow whose idle timeout fired with a FIN on
// both sides when reset-on-timeout is disabled; otherwise the caller's
// end resets both, as before.
func (pr *proxied) idleEnd() {
	if !pr.snap.Cfg.IdleFIN || !pr.ended.CompareAndSwap(false, true) {
		return
	}
	if sc := pr.srv.Load(); sc != nil {
		sc.conn.Close()
	}
	pr.client.Close()
}
