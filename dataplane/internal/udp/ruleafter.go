package udp

import (
	"time"

	"github.com/openltm/openltm/rules"
)

var _ rules.Scheduler = (*flow)(nil)

// After implements rules.Scheduler: on a UDP virtual the connection is
// the flow (the client's address and port) until its idle timeout or a
// reject, so a script `after` scheduled runs on a timer's goroutine
// under the flow's rule lock, as an event does, while the flow lives.
// It has no datagram of its own (UDP::payload is empty, UDP::drop does
// nothing); UDP::respond sends to the client, UDP::send (toServer) to
// the flow's last server side, a pool or node decision applies to the
// next datagram, and reject or a Tcl error ends the flow. A flow whose
// rules never call `after` starts no timer.
func (f *flow) After(d time.Duration, fn func() error) (cancel func()) {
	t := time.AfterFunc(d, func() { f.runLater(fn) })
	return func() { t.Stop() }
}

// runLater runs a scheduled script unless the flow's rules are over (a
// timer that fired while the flow was ending).
func (f *flow) runLater(fn func() error) {
	rs := f.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return
	}
	rs.payload, rs.cur = nil, nil
	err := fn()
	reject := rs.reject
	toClient, toServer := rs.toClient, rs.toServer
	rs.reject, rs.dropped, rs.toClient, rs.toServer = false, false, nil, nil
	ev := rs.ev
	rs.mu.Unlock()
	if err != nil {
		f.logRuleError(ev, err)
		f.end()
		return
	}
	if reject {
		f.end()
		return
	}
	for _, d := range toClient {
		f.toClient(d)
	}
	if to := f.last.Load(); to != nil {
		for _, d := range toServer {
			to.send(d)
		}
	}
}
