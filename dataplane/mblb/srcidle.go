package mblb

import (
	"errors"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// SourceRefused is a Dial or DialFD error for a server connection the
// proxy would not make for its source, not for its member: every SNAT
// translation address at its connection-limit, or source-port
// preserve-strict's port in use. The engine handles it as any failed
// connect (another member is tried), and when no member is left it
// resets the client with Cause instead of NoServer, as the standard
// virtuals do. Err is what errors.Is sees (snatobj.ErrFull, say).
type SourceRefused struct {
	Cause rstcause.Cause
	Err   error
}

func (e *SourceRefused) Error() string { return e.Err.Error() }

// Unwrap is Err.
func (e *SourceRefused) Unwrap() error { return e.Err }

// refusedCause is the reset cause a failed connect leaves on its
// message: SourceRefused's Cause, else 0 (the member's failure). Only on
// the failure path.
func refusedCause(err error) rstcause.Cause {
	var sr *SourceRefused
	if errors.As(err, &sr) {
		return sr.Cause
	}
	return 0
}

// SetIdleTimeout gives the server connection of l an idle timeout of
// its own, which replaces the engine's (Config.IdleTimeout for a
// client's own connection, the OneConnect pool's idle-timeout-override
// for a pooled one): the ltm snat-translation tcp-idle-timeout of the
// address it leaves from. Idle means what it means for the engine's own:
// no request awaiting its answer on it (a pooled connection resting in
// the pool) and no byte moved either way for d; a connection that is
// idle then is closed (a client's own as the engine closes an idle one,
// a pooled one leaves the pool). Called from Events.LegOpened; the
// janitor's tick is shortened to d/4 if it was longer.
func (l *Leg) SetIdleTimeout(d time.Duration) {
	if l.sc == nil || d <= 0 {
		return
	}
	l.sc.idleTO.Store(int64(d))
	l.sc.e.wantTick(d / 4)
}

// ownIdle is the idle timeout of a client's own connection sc: its own
// (SetIdleTimeout), else the engine's. One atomic load.
func (sc *serverConn) ownIdle() int64 {
	if d := sc.idleTO.Load(); d > 0 {
		return d
	}
	return int64(sc.e.cfg.IdleTimeout)
}

// legGone reports a connection the engine was given but never kept
// (the engine closed meanwhile: register refused it) as closed, so that
// what the proxy holds for it (its SNAT translation address, its lsn
// translation) is given back.
func (e *Engine) legGone(sc *serverConn) {
	if e.cfg.Events.LegClosed != nil {
		e.cfg.Events.LegClosed(&sc.leg)
	}
}
