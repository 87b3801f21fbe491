package fwdproxy

import (
	"net"
	"sync"
	"time"
)

// CloseTimers are the tcp profile's close timers as they apply to an
// explicit proxy's client: its connection, its origin connections and
// its tunnel. The zero value (or a nil SessionOptions.Close) runs none.
type CloseTimers struct {
	// AfterFIN (close-wait-timeout) bounds how long a CONNECT tunnel is
	// kept once one side has sent its FIN, and how long a client that
	// sent its FIN waits for the answer it is owed: then both sides are
	// reset.
	AfterFIN time.Duration
	// FINWait (fin-wait-timeout) bounds how long a FIN passed on through
	// a tunnel may stay unacknowledged (the socket in FIN-WAIT-1): then
	// both sides are reset.
	FINWait time.Duration
	// ZeroWindow (zero-window-timeout) bounds how long bytes may wait for
	// a peer that advertises a zero window: a client is reset (with its
	// origins and tunnel); an origin connection is reset, which fails the
	// request on it as an origin's reset does.
	ZeroWindow time.Duration
}

// closeTick is the timers' longest period: a timer fires at most this
// late (or a quarter of itself, when shorter).
const closeTick = 200 * time.Millisecond

// closeState runs one session's close timers on a timer of its own,
// reading the sockets' TCP_INFO; nil when the virtual sets none.
type closeState struct {
	s    *Session
	ct   CloseTimers
	tick time.Duration

	mu    sync.Mutex
	conns []watched // the client first, then origins and the tunnel
	finAt time.Time // when the first FIN went through the tunnel, or came from the client
	finBy string    // whose FIN it was, for the log
	t     *time.Timer
	done  bool
}

// watched is a socket whose window the timers read.
type watched struct {
	c      net.Conn
	client bool
	zwAt   time.Time // when its zero window was first seen
}

// startTimers starts s's close timers, when the virtual has any.
func (s *Session) startTimers() {
	ct := s.o.Close
	if ct == nil || (ct.AfterFIN <= 0 && ct.FINWait <= 0 && ct.ZeroWindow <= 0) {
		return
	}
	tick := closeTick
	for _, d := range []time.Duration{ct.AfterFIN, ct.FINWait, ct.ZeroWindow} {
		if d > 0 && d/4 < tick {
			tick = max(d/4, 10*time.Millisecond)
		}
	}
	cs := &closeState{s: s, ct: *ct, tick: tick, conns: []watched{{c: s.c, client: true}}}
	cs.mu.Lock() // run waits for t
	defer cs.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.timers = cs
	cs.t = time.AfterFunc(tick, cs.run)
}

// watch adds an origin or tunnel socket to the timers. (s.timers is
// set before the session's first request, on its own goroutine.)
func (s *Session) watch(c net.Conn) {
	if cs := s.timers; cs != nil {
		cs.mu.Lock()
		cs.conns = append(cs.conns, watched{c: c})
		cs.mu.Unlock()
	}
}

// finSent notes that a tunnel passed a FIN on, starting the FIN timers.
func (s *Session) finSent() {
	if cs := s.timers; cs != nil {
		cs.mu.Lock()
		if cs.finAt.IsZero() {
			cs.finAt, cs.finBy = time.Now(), "a tunnel"
		}
		cs.mu.Unlock()
	}
}

// stop ends the timers (the session's end).
func (cs *closeState) stop() {
	cs.mu.Lock()
	cs.done = true
	cs.t.Stop()
	cs.mu.Unlock()
}

// run is one tick: each timer that ran out resets what it bounds.
func (cs *closeState) run() {
	now := time.Now()
	var resetAll bool
	var why string
	var failed []net.Conn
	cs.mu.Lock()
	if cs.done {
		cs.mu.Unlock()
		return
	}
	finFor := time.Duration(-1)
	if !cs.finAt.IsZero() {
		finFor = now.Sub(cs.finAt)
		if cs.ct.AfterFIN > 0 && finFor >= cs.ct.AfterFIN {
			resetAll, why = true, cs.finBy+" half-closed for "+cs.ct.AfterFIN.String()
		}
	}
	keep := cs.conns[:0]
	for _, w := range cs.conns {
		st, open := sockState(w.c)
		if !open && !w.client {
			continue // closed: forgotten
		}
		if w.client && st.closeWait && cs.finAt.IsZero() {
			// The client's FIN arrived while the proxy owes it an
			// answer (it reads the next request only after).
			cs.finAt, cs.finBy = now, "the client"
		}
		if cs.ct.FINWait > 0 && finFor >= cs.ct.FINWait && st.finWait1 {
			resetAll, why = true, "a FIN unacknowledged for "+cs.ct.FINWait.String()
		}
		if cs.ct.ZeroWindow > 0 {
			switch {
			case !st.zeroWindow:
				w.zwAt = time.Time{}
			case w.zwAt.IsZero():
				w.zwAt = now
			case now.Sub(w.zwAt) >= cs.ct.ZeroWindow:
				if !w.client {
					failed = append(failed, w.c)
					continue
				}
				resetAll, why = true, "the client took nothing for "+cs.ct.ZeroWindow.String()+" (zero window)"
			}
		}
		keep = append(keep, w)
	}
	cs.conns = keep
	var all []net.Conn
	if resetAll {
		cs.done = true
		for _, w := range cs.conns {
			all = append(all, w.c)
		}
	} else {
		cs.t.Reset(cs.tick)
	}
	cs.mu.Unlock()
	for _, c := range failed {
		cs.s.logf("fwdproxy: origin %s took nothing for %v (zero window), reset", c.RemoteAddr(), cs.ct.ZeroWindow)
		resetConn(c)
	}
	if resetAll {
		cs.s.logf("fwdproxy: client %s: %s, reset", cs.s.c.RemoteAddr(), why)
		for _, c := range all {
			resetConn(c)
		}
		cs.s.Close(true)
	}
}

// resetConn closes c with a reset where it can (SO_LINGER 0).
func resetConn(c net.Conn) {
	if tc, ok := c.(interface{ SetLinger(int) error }); ok { // a TCPConn, or one wrapping it
		tc.SetLinger(0)
	}
	c.Close()
}

// sockInfo is what the timers read of a socket.
type sockInfo struct {
	zeroWindow bool // bytes wait for a peer whose window is closed
	finWait1   bool // its FIN is sent and not acknowledged
	closeWait  bool // the peer's FIN arrived
}

// logf logs through SessionOptions.Logf, when set.
func (s *Session) logf(format string, args ...any) {
	if s.o.Logf != nil {
		s.o.Logf(format, args...)
	}
}
