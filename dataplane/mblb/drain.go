package mblb

import "fmt"

// errDrainExpired ends a drained member's connection whose answers did
// not all come within Config.ShutdownTimeout. It wraps ErrAborted: the
// member is not blamed, and what it left unanswered follows the retry
// settings as after a failure.
var errDrainExpired = fmt.Errorf("shutdown-timeout passed while draining: %w", ErrAborted)

// DrainMembers takes out of service every server connection to a member
// that gone reports (disabled or removed from its pool by a commit), as
// BIG-IP drains such a member: no new request goes on them, the answers
// still owed on them are awaited, and each closes once it has them all,
// or when Config.ShutdownTimeout has passed (at once when it is 0), the
// member's unanswered requests then going elsewhere under the retry
// settings. A later message that is still sent to the member
// (persistence, a rule naming it) opens a connection of its own. It
// returns how many connections it took out of service; it is called
// once per commit, never on the message path.
func (e *Engine) DrainMembers(gone func(Member) bool) int {
	e.mu.Lock()
	var list []*serverConn
	for sc := range e.servers {
		if gone(sc.leg.Member) {
			list = append(list, sc)
		}
	}
	e.mu.Unlock()
	n := 0
	for _, sc := range list {
		if sc.drainMember() {
			n++
		}
	}
	e.stats.drained.Add(uint64(n))
	return n
}

// drainMember is DrainMembers for one connection: out of its owner's
// list or the pool, so that no one chooses it again, then closed in order
// when nothing is owed on it, or left to the janitor (expire) until its
// answers have come or the shutdown timeout has passed.
func (sc *serverConn) drainMember() bool {
	e := sc.e
	if sc.tunneled.Load() || sc.uploading.Load() {
		return false // a tunnel or an upload ends with its client
	}
	if sc.owner != nil {
		sc.owner.removeConn(sc)
	} else if e.pool != nil {
		e.pool.remove(sc)
	}
	if e.cfg.Request.Mode == IIOP {
		return sc.drainIIOP() // (GIOP requests are not in q)
	}
	sc.qmu.Lock()
	if sc.dead || sc.memberDrain {
		sc.qmu.Unlock()
		return false
	}
	sc.memberDrain = true
	if sc.q.size == 0 || sc.connecting.Load() {
		// Nothing was sent on it (or nothing yet: a connect under way's
		// requests go to another member, the end being ours).
		sc.endLocked()
		return true
	}
	t := e.cfg.ShutdownTimeout
	if t <= 0 {
		sc.qmu.Unlock()
		sc.fail(errDrainExpired)
		return true
	}
	sc.drainBy = e.now() + int64(t)
	sc.qmu.Unlock()
	return true
}
