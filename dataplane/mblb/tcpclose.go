package mblb

import (
	"errors"
	"fmt"
	"net"
	"sync"
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

// SocketTimers runs the engine's close timers on a client socket whose
// bytes the engine does not read itself (an HTTP/2 client's: its
// streams reach the engine on pipes, so neither its FIN nor its window
// is seen by a session). It ticks on a timer of its own.
type SocketTimers struct {
	c     net.Conn
	ct    CloseTimers
	tick  time.Duration
	name  string
	reset func()
	e     *Engine

	mu    sync.Mutex
	t     *time.Timer
	finAt time.Time // when the client's FIN was first seen (CLOSE-WAIT)
	zwAt  time.Time // when its zero window was first seen
	done  bool
}

// WatchSocket starts the engine's close timers on client socket c:
// close-wait-timeout after the client's FIN while the socket is still
// open (answers owed), zero-window-timeout while it holds bytes for a
// zero window. reset is called once, from the timer's goroutine, when
// one runs out; it should reset c. Nil (and nothing started) when the
// engine runs no timers, so that an unset profile costs one test.
func (e *Engine) WatchSocket(c net.Conn, name string, reset func()) *SocketTimers {
	ct := e.cfg.Close
	if ct.AfterFIN <= 0 && ct.ZeroWindow <= 0 {
		return nil
	}
	tick := closeTick
	for _, d := range []time.Duration{ct.AfterFIN, ct.ZeroWindow} {
		if d > 0 && d/4 < tick {
			tick = max(d/4, 10*time.Millisecond)
		}
	}
	st := &SocketTimers{c: c, ct: ct, tick: tick, name: name, reset: reset, e: e}
	st.mu.Lock()
	st.t = time.AfterFunc(tick, st.run)
	st.mu.Unlock()
	return st
}

// Stop ends the timers (the client's end); st may be nil.
func (st *SocketTimers) Stop() {
	if st == nil {
		return
	}
	st.mu.Lock()
	st.done = true
	st.t.Stop()
	st.mu.Unlock()
}

// run is one tick.
func (st *SocketTimers) run() {
	st.mu.Lock()
	if st.done {
		st.mu.Unlock()
		return
	}
	now := time.Now()
	closeWait, zw, open := connInfo(st.c)
	var why string
	switch {
	case !open:
		st.done = true
	case st.ct.AfterFIN > 0 && closeWait:
		if st.finAt.IsZero() {
			st.finAt = now
		} else if now.Sub(st.finAt) >= st.ct.AfterFIN {
			why = fmt.Sprintf("half-closed for %v with answers owed", st.ct.AfterFIN)
		}
	}
	if why == "" && open && st.ct.ZeroWindow > 0 {
		switch {
		case !zw:
			st.zwAt = time.Time{}
		case st.zwAt.IsZero():
			st.zwAt = now
		case now.Sub(st.zwAt) >= st.ct.ZeroWindow:
			why = fmt.Sprintf("took nothing for %v (zero window)", st.ct.ZeroWindow)
		}
	}
	if why != "" {
		st.done = true
	}
	if !st.done {
		st.t.Reset(st.tick)
	}
	st.mu.Unlock()
	if why != "" {
		st.e.logf("mblb: client %s %s, reset", st.name, why)
		st.reset()
	}
}

// Settle holds the socket open, before the caller closes it, while the
// client has not taken every byte written to it and a timer may still
// reset it: a half-closed client (close-wait-timeout) or one that
// advertises a zero window (zero-window-timeout). Closing at once would
// leave the bytes to the kernel, which keeps retrying a peer that never
// reads, where BIG-IP resets it when the timer runs out. It returns at
// once when no timer could fire; st may be nil.
func (st *SocketTimers) Settle() {
	if st == nil {
		return
	}
	for {
		st.mu.Lock()
		done := st.done
		st.mu.Unlock()
		if done {
			return
		}
		closeWait, zw, open := connInfo(st.c)
		if !open || connUnsent(st.c) == 0 ||
			!(closeWait && st.ct.AfterFIN > 0) && !(zw && st.ct.ZeroWindow > 0) {
			return
		}
		time.Sleep(st.tick)
	}
}
