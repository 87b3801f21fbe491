package mblb

import (
	"errors"
	"syscall"
)

// peerReset reports whether err is the peer's reset (RST), the "abort"
// of the mblb profile's isolate-abort, as opposed to an orderly close,
// a timeout or an end the proxy chose.
func peerReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
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
