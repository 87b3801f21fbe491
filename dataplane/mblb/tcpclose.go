package mblb

import (
	"errors"
	"time"
)

// CloseTimers are the tcp profile's close timers that mean something on
// a message-balanced virtual, whose client and member connections are
// not paired: the client's half-close (its FIN) while its answers are
// still owed, and a peer that takes no more bytes (a zero window).
// The zero value runs none, and then the janitor does not look.
type CloseTimers struct {
	// AfterFIN (close-wait-timeout) bounds how long a client that sent
	// its FIN waits for the answers it is owed: then it is reset, with
	// its own server connections.
	AfterFIN time.Duration
	// ZeroWindow (zero-window-timeout) bounds how long bytes may wait for
	// a client or a member that advertises a zero window: the client is
	// reset, or the member's connection failed as by a reset (its
	// requests answered as for a member that reset them).
	ZeroWindow time.Duration
}

// ErrZeroWindow fails a member connection whose zero window outlasted
// CloseTimers.ZeroWindow.
var ErrZeroWindow = errors.New("mblb: the member's receive window stayed closed")

// closeTick is the janitor's longest period while close timers run: a
// timer fires at most this late (or a quarter of itself, when shorter).
const closeTick = 200 * time.Millisecond

// closeTimers runs the client's timers at now (the janitor's); true when
// they closed it.
func (s *ClientConn) closeTimers(ct CloseTimers, now int64) bool {
	if ct.AfterFIN > 0 {
		if at := s.eofAt.Load(); at != 0 && now-at >= int64(ct.AfterFIN) {
			s.e.logf("mblb: client %s half-closed for %v with answers owed, reset", s.client, ct.AfterFIN)
			s.Close(true)
			return true
		}
	}
	if ct.ZeroWindow == 0 {
		return false
	}
	fd := int(s.zwFD.Load()) - 1
	if fd < 0 || !zeroWindowFD(fd) {
		s.zwAt = 0
		return false
	}
	if s.zwAt == 0 {
		s.zwAt = now
	}
	if now-s.zwAt >= int64(ct.ZeroWindow) {
		s.e.logf("mblb: client %s took nothing for %v (zero window), reset", s.client, ct.ZeroWindow)
		s.Close(true)
		return true
	}
	return false
}

// noteEOF records when the client half-closed, for CloseTimers.AfterFIN.
func (s *ClientConn) noteEOF() {
	if s.e.cfg.Close.AfterFIN > 0 && s.eofAt.Load() == 0 {
		s.eofAt.Store(time.Now().UnixNano())
	}
}

// watchFD makes fd the client socket the janitor reads the window of;
// only with a zero-window timer.
func (s *ClientConn) watchFD(fd int) {
	if s.e.cfg.Close.ZeroWindow > 0 {
		s.zwFD.Store(int32(fd) + 1)
	}
}

// zeroWindow runs the member connection's zero-window timer at now.
func (sc *serverConn) zeroWindow(d time.Duration, now int64) {
	if sc.down.Load() {
		return
	}
	var zw bool
	if sc.lp != nil {
		zw = zeroWindowFD(sc.lp.fd)
	} else if sc.conn != nil {
		zw = connZeroWindow(sc.conn)
	}
	if !zw {
		sc.zwAt = 0
		return
	}
	if sc.zwAt == 0 {
		sc.zwAt = now
	}
	if now-sc.zwAt >= int64(d) {
		sc.e.logf("mblb: %s %s took nothing for %v (zero window), reset", sc.leg.Member.Name, sc.leg.Remote, d)
		sc.fail(ErrZeroWindow)
	}
}
