package mblb

import (
	"errors"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// peerReset reports whether err is the peer's reset (RST), the "abort"
// of the mblb profile's isolate-abort, as opposed to an orderly close,
// a timeout or an end the proxy chose.
func peerReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// memberCause is why a client is reset for its member connection's end
// (tm.rstcause.log): a rule's runtime error on the server side
// (SERVER_DATA, HTTP_RESPONSE...) is the client's own TCL error; the
// member's reset, or any socket error, is passed on as the member's
// reset [M]; any other end (closed mid-response, response-timeout, a
// response over the size limit, zero window) has words of ours [M].
func memberCause(err error) rstcause.Cause {
	var rf ruleFailed
	var errno syscall.Errno
	switch {
	case errors.As(err, &rf):
		return rstcause.TCLError
	case peerReset(err) || errors.As(err, &errno):
		return rstcause.Peer | rstcause.PeerReset
	}
	return rstcause.Peer | rstcause.ServerFailed
}

// clientReset is a session's read failing: with Config.PropagateAbort
// a client's reset is passed on to its own server connections (reset at
// once instead of drained, Close), then the session is reset as any
// failed one is.
func (s *ClientConn) clientReset(err error) {
	if s.e.cfg.PropagateAbort && peerReset(err) {
		s.abortOwn.Store(true)
	}
	s.Close(true)
}

// noteFIN records the client's half-close for isolate-client enabled
// (Config.KeepOnClientClose), which keeps it from the client's own
// server connections; nothing otherwise.
func (s *ClientConn) noteFIN() {
	if s.e.cfg.KeepOnClientClose {
		s.clientFIN.Store(true)
	}
}

// closeWhenAnswered passes a member's orderly close on to the client
// (isolate-server disabled, Config.PropagateServerClose): the client is
// closed in order once every answer it is owed has been written, as
// after its own half-close, or with a FIN when Config.ShutdownTimeout
// has passed (the janitor, closeAnswered) [M].
func (s *ClientConn) closeWhenAnswered() {
	if s.isClosed() {
		return
	}
	t := s.e.cfg.ShutdownTimeout
	if t <= 0 || s.answered() {
		s.Close(false)
		return
	}
	s.finBy.CompareAndSwap(0, s.e.now()+int64(t))
	s.e.finSeen.Store(true)
	if s.answered() { // the last answer went out meanwhile
		s.Close(false)
	}
}

// answered reports whether every request the client sent has had its
// answer written.
func (s *ClientConn) answered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextOut == s.nextSeq && !s.writing
}

// closeAnswered is the janitor's end of closeWhenAnswered: it closes a
// client a member's close was passed on to once it is answered or its
// time is up, and reports whether it did.
func (s *ClientConn) closeAnswered(now int64) bool {
	by := s.finBy.Load()
	if by == 0 {
		return false
	}
	if now <= by && !s.answered() {
		return false
	}
	if now > by {
		s.e.logf("mblb: client %s still owed answers %v after its member closed, closed", s.client, s.e.cfg.ShutdownTimeout)
	}
	s.Close(false)
	return true
}

// expired passes the idle expiry of the client's own connection sc on
// to the client (isolate-expire disabled, Config.PropagateExpire): it
// ends as its own idle timeout would end it, reset unless the idle
// reset is off, and its other server connections close at once.
func (s *ClientConn) expired(sc *serverConn) {
	reset := s.e.cfg.IdleReset == nil || s.e.cfg.IdleReset()
	s.e.logf("mblb: client %s: its connection to %s %s expired idle, closed (isolate-expire disabled; reset %v)",
		s.client, sc.leg.Member.Name, sc.leg.Remote, reset)
	if reset {
		s.rst(rstcause.IdleTimeout)
	}
	s.expireOwn.Store(true)
	s.Close(reset)
}
