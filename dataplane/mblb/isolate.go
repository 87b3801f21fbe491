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
