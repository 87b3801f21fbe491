package l4

import (
	"time"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

var _ rules.Scheduler = (*proxied)(nil)

// After implements rules.Scheduler: a script `after` scheduled runs on a
// timer's goroutine under the flow's rule lock, as an event does, and
// what it asks (reject, drop, TCP::respond, TCP::close) is carried out
// as after an event. A flow whose rules never call `after` starts no
// timer.
func (pr *proxied) After(d time.Duration, fn func() error) (cancel func()) {
	t := time.AfterFunc(d, func() { pr.runLater(fn) })
	return func() { t.Stop() }
}

// runLater runs a scheduled script unless the flow's rules are over (a
// timer that fired while the flow was ending). What a rejecting script
// sent the client (`TCP::respond "timeout"; reject`, the usual idle
// guard) is written before the reset.
func (pr *proxied) runLater(fn func() error) {
	rs := pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return
	}
	err := fn()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach = irules.GoOn, false
	ev := rs.ev
	rs.mu.Unlock()
	if err == nil && v == irules.Reject && !pr.flushTo(false) {
		return
	}
	pr.applyRule(ev, err, v, detach)
	if pr.ended.Load() { // a held handshake waits no more (sslsession.go)
		rs.mu.Lock()
		rs.resumeHold()
		rs.mu.Unlock()
	}
}
