//go:build linux

package l4

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"golang.org/x/sys/unix"
)

// The fastl4 and tcp profiles' close handling on loop flows
// (sockopt.Close): what a FIN does (loose-close, reset-on-client-fin) and
// the timers the loop's tick runs (tcp-close-timeout, close-wait-timeout,
// fin-wait-timeout, zero-window-timeout, client-timeout). A virtual
// without them has a nil TCPClose: one comparison per FIN and per flow on
// the tick, nothing on reads and writes.

// closeState is a loop flow's record of its end, for its timers; made
// at the flow's first FIN or tick that needs it, so a flow of a virtual
// without close handling carries only its nil pointer.
type closeState struct {
	// finAt is when the first FIN arrived (loop time, 0: none yet), finUp
	// its direction: the FIN was passed on to that direction's
	// destination.
	finAt int64
	finUp bool
	// zwAt is since when the client's [0] and the member's [1] socket
	// have bytes for a receiver that advertises a zero window (0: not).
	zwAt [2]int64
}

// closeOnFIN applies c to a FIN that came from the source of direction
// up, once what preceded it was written; true when it ended the flow.
func (lf *loopFlow) closeOnFIN(c *sockopt.Close, up bool) bool {
	switch {
	case up && c.ResetOnClientFIN:
		lf.abort(true)
		return true
	case c.Loose && lf.ctls == nil:
		// Both sockets closed: the destination gets the FIN passed on,
		// the source ours at once, without waiting for its own.
		lf.closeBoth()
		return true
	}
	if lf.cs == nil {
		lf.cs = &closeState{}
	}
	if lf.cs.finAt == 0 {
		lf.cs.finAt, lf.cs.finUp = lf.lr.Now(), up
	}
	return false
}

// closeTimers runs c's timers for the flow at now; true when they ended
// it.
func (lf *loopFlow) closeTimers(c *sockopt.Close, now int64) bool {
	if lf.sfd < 0 || lf.connecting {
		if c.ClientTimeout > 0 && now-lf.Created().UnixNano() >= int64(c.ClientTimeout) {
			lf.abort(true)
			return true
		}
		return false
	}
	if lf.cs == nil {
		if c.ZeroWindow == 0 {
			return false
		}
		lf.cs = &closeState{}
	}
	if at := lf.cs.finAt; at != 0 {
		if c.AfterFIN > 0 && now-at >= int64(c.AfterFIN) {
			lf.abort(true)
			return true
		}
		if _, dst := lf.ends(lf.cs.finUp); c.FinWait > 0 && now-at >= int64(c.FinWait) && tcpState(dst) == tcpFinWait1 {
			lf.abort(true)
			return true
		}
	}
	if c.ZeroWindow > 0 {
		for i, fd := range [2]int{lf.cfd, lf.sfd} {
			if !zeroWindow(fd) {
				lf.cs.zwAt[i] = 0
				continue
			}
			if lf.cs.zwAt[i] == 0 {
				lf.cs.zwAt[i] = now
			}
			if now-lf.cs.zwAt[i] >= int64(c.ZeroWindow) {
				lf.abort(true)
				return true
			}
		}
	}
	return false
}

// tcpFinWait1 is Linux's TCP_FIN_WAIT1 (tcpi_state).
const tcpFinWait1 = 4

// tcpState is a socket's TCP state (tcpi_state), 0 when unknown.
func tcpState(fd int) uint8 {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0
	}
	return ti.State
}

// zeroWindow reports whether fd holds bytes its peer advertises no room
// for: a zero send window with data not yet sent.
func zeroWindow(fd int) bool {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return false
	}
	return ti.Snd_wnd == 0 && ti.Notsent_bytes > 0
}

// connState is tcpState of a goroutine flow's connection.
func connState(c *net.TCPConn) (st uint8) {
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { st = tcpState(int(fd)) })
	}
	return st
}

// connZeroWindow is zeroWindow of a goroutine flow's connection.
func connZeroWindow(c *net.TCPConn) (zw bool) {
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { zw = zeroWindow(int(fd)) })
	}
	return zw
}
