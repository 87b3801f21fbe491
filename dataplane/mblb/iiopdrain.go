package mblb

import (
	"time"
)

// A member drained by a commit (DrainMembers: disabled, or removed from
// its pool) has its IIOP connections, a client's own or shared by
// one-connect, taken out of service as BIG-IP lets a disabled member's
// existing connections finish: no new request goes on them (they are out
// of their client's list and of the pool), the replies still owed on
// them are awaited, and each is closed by its reader once nothing is
// owed on it (after the last fragment of the reply that settled the last
// request, or when the last owed request is cancelled, timed out or
// otherwise forgotten: a late reply to a cancelled or timed-out request
// does not hold it [M: the client has given up on that reply]), or when
// iiopDrainBound has passed, the requests still
// unanswered then settled as for a member gone (memberGone: each
// answered with COMM_FAILURE, COMPLETED_MAYBE, the member having had
// it) [M]. GIOP requests are not in the connection's
// ordered queue, so what is owed is counted from the IIOP state: the
// client's pending requests on its own connection, the loans of a
// shared one.

// iiopDrainBound is how long a drained member's IIOP connection waits
// for the replies owed on it [M]: the mblb profile's shutdown-timeout
// when set, else the iiop profile's timeout (a request waits no longer
// for its reply), else the engine's idle timeout; with none of them, 0:
// closed at once, as before.
func iiopDrainBound(cfg *Config) time.Duration {
	for _, d := range []time.Duration{cfg.ShutdownTimeout, cfg.Request.IIOP.Timeout, cfg.IdleTimeout} {
		if d > 0 {
			return d
		}
	}
	return 0
}

// drainIIOP is drainMember for an IIOP connection (already out of its
// owner's list or the pool).
func (sc *serverConn) drainIIOP() bool {
	e := sc.e
	sc.qmu.Lock()
	if sc.dead || sc.memberDrain {
		sc.qmu.Unlock()
		return false
	}
	sc.memberDrain = true
	sc.qmu.Unlock()
	sc.iiopDrain.Store(true) // (before owed: a reply settled after it sees the flag)
	bound := iiopDrainBound(&e.cfg)
	if bound <= 0 || sc.iiopOwed() == 0 {
		sc.shutdown()
		return true
	}
	time.AfterFunc(bound, func() {
		if sc.down.Load() {
			return // (closed meanwhile)
		}
		if n := sc.iiopOwed(); n > 0 {
			e.logf("mblb: IIOP %s %s drained, %d request(s) still unanswered after %v: connection closed", sc.leg.Member.Name, sc.leg.Remote, n, bound)
			sc.fail(errDrainExpired)
			return
		}
		sc.shutdown()
	})
	return true
}

// iiopOwed is how many requests await their reply on sc: its owner's
// pending on it, or a shared connection's loans.
func (sc *serverConn) iiopOwed() int {
	if sc.iiop != nil {
		return int(sc.npending.Load())
	}
	s := sc.owner
	if s == nil || s.iiop == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.iiop.pending {
		if p.sc == sc {
			n++
		}
	}
	return n
}

// iiopDrained closes a drained IIOP connection with nothing owed on it
// any more; its reader calls it after each message ending a reply, and
// the client's side when it forgets a request there (a flag test when
// the connection is not drained).
func (sc *serverConn) iiopDrained() {
	if sc.iiopDrain.Load() && sc.iiopOwed() == 0 {
		sc.shutdown()
	}
}
