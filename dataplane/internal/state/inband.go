package state

import (
	"github.com/openltm/openltm/dataplane/monitor"
)

// Inband monitors are passive: they probe nothing, and the proxies tell
// them how each connection to the member went (ConnectFailed,
// ConnectSucceeded); their verdict joins the watch's rule like any
// monitor's.

// updatePassive starts (or keeps) the inband monitor name; w.mu is held.
func (w *Watch) updatePassive(name string, spec *monitor.Spec) {
	if w.passive == nil {
		w.passive = map[string]*monitor.Passive{}
	}
	if p := w.passive[name]; p != nil {
		if p.Spec().Equal(spec) {
			return
		}
		go p.Stop()
		delete(w.states, name)
	}
	var p *monitor.Passive
	p = monitor.NewPassive(spec, func(s monitor.State) { w.reportPassive(name, p, s) })
	w.passive[name] = p
	w.states[name] = p.State()
	w.setInband()
}

// dropPassive stops the inband monitors not in want (all when nil); w.mu
// is held. They are stopped on their own goroutine: a report may be
// waiting for w.mu while holding the monitor's own lock.
func (w *Watch) dropPassive(want map[string]bool) {
	for name, p := range w.passive {
		if !want[name] {
			go p.Stop()
			delete(w.passive, name)
			delete(w.states, name)
		}
	}
	w.setInband()
}

func (w *Watch) setInband() {
	var first *monitor.Passive
	for _, name := range w.rule.Names {
		if p := w.passive[name]; p != nil {
			first = p
			break
		}
	}
	w.inband.Store(first)
}

func (w *Watch) reportPassive(name string, p *monitor.Passive, s monitor.State) {
	w.mu.Lock()
	if w.passive[name] != p {
		w.mu.Unlock()
		return
	}
	w.set(name, s)
}

// ConnectFailed tells the member's inband monitor (if any) that a
// connection to it failed.
func (m *Member) ConnectFailed() {
	if p := m.Watch.inband.Load(); p != nil {
		p.Failed()
	}
}

// ConnectSucceeded tells the member's inband monitor (if any) that a
// connection to it succeeded; it costs one atomic load without one.
func (m *Member) ConnectSucceeded() {
	if p := m.Watch.inband.Load(); p != nil {
		p.Succeeded()
	}
}

// ResponseClock is a clock timing the member's answers on one new
// connection for its inband monitor's response-time, or nil (no inband
// monitor, or no response-time): the proxies call Sent and Answered as
// bytes go and come, and Stop when the connection ends.
func (m *Member) ResponseClock() *monitor.ResponseClock {
	return m.Watch.inband.Load().Clock()
}
