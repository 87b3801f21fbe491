package mblbvs

import (
	"time"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

var _ rules.Scheduler = (*mblbRules)(nil)

// After implements rules.Scheduler: a script `after` scheduled runs on a
// timer's goroutine under the client's rule lock, as an event does;
// reject, drop and TCP::close end the client as after an event, and a
// Tcl error resets it. A client whose rules never call `after` starts no
// timer.
func (r *mblbRules) After(d time.Duration, fn func() error) (cancel func()) {
	t := time.AfterFunc(d, func() { r.runLater(fn) })
	return func() { t.Stop() }
}

// MayBlock implements rules.Blocker: a virtual whose rules suspend events
// serves its clients on goroutines (mblb.Config.Waits), where `after ms`
// holds up that client alone.
func (r *mblbRules) MayBlock() bool { return r.f.mv.waits }

// runLater runs a scheduled script unless the client's rules are over
// (end gave the session back).
func (r *mblbRules) runLater(fn func() error) {
	r.mu.Lock()
	if r.sess == nil {
		r.mu.Unlock()
		return
	}
	r.verdict = irules.GoOn
	err := fn()
	v := r.verdict
	r.verdict = irules.GoOn
	r.mu.Unlock()
	r.goOn(err, v)
}
