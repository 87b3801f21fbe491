package l4

import (
	"errors"
	"net"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
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

// lowSide is the tcp profile side of direction up's destination (the
// members' going up, the client's going down) when it sets
// proxy-buffer-low, nil otherwise. A goroutine flow's copy loop then
// waits for that socket itself (no splice, which waits inside the
// runtime), with TCP_NOTSENT_LOWAT at twice low while it waits (Linux
// wakes the writer below half of it) and proxy-buffer-high again once
// woken, as the event loops do (bufferlow_linux.go).
func (pr *proxied) lowSide(up bool) *sockopt.Side {
	s := pr.snap.Cfg.ClientTCP
	if up {
		s = pr.snap.Cfg.ServerTCP
	}
	if s == nil || s.NotSentLow == 0 {
		return nil
	}
	return s
}

// errLowWait marks a copy loop's write waiting below proxy-buffer-low.
var errLowWait = errors.New("l4: waiting for proxy-buffer-low")

// lowWrite writes b to dst as the copy loop does with proxy-buffer-low
// (lowSide): a full socket is waited on with its wake-up at low, and
// gets high back once woken.
func lowWrite(dst *net.TCPConn, s *sockopt.Side, b []byte) (int, error) {
	rc, err := dst.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		n       int
		werr    error
		waiting bool
	)
	err = rc.Write(func(fd uintptr) bool {
		if waiting {
			waiting = false
			s.LowResume(int(fd))
		}
		for n < len(b) {
			k, err := rawsock.Write(int(fd), b[n:])
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				waiting = true
				s.LowWait(int(fd))
				return false
			case err != nil:
				werr = err
				return true
			}
			n += k
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}
