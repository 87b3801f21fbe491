package dataplane

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// monStatus is a monitor rule's combined verdict, cached for the hot path.
type monStatus int32

const (
	monUnchecked monStatus = iota // no monitor
	monChecking                   // no verdict yet
	monUp
	monDown
)

func (s monStatus) String() string {
	return [...]string{"unchecked", "checking", "up", "down"}[s]
}

// watch runs the monitor instances of one member or node and combines their
// verdicts by the monitor rule. Its status survives commits that leave the
// rule and the monitors unchanged.
type watch struct {
	// describe names the object in log lines: "Pool /Common/p member
	// /Common/10.1.1.1:80" or "Node /Common/n address 10.1.1.1".
	describe string
	// changed is called (outside the lock) when the combined status moves.
	changed func(old, new monStatus)
	logf    func(down bool, line string)

	status   atomic.Int32 // monStatus
	disabled atomic.Bool  // some monitor's recv-disable matched

	mu     sync.Mutex
	rule   MonitorRule
	insts  map[string]*monitor.Instance
	states map[string]monitor.State
	since  time.Time
	locked bool
}

func newWatch(describe string) *watch {
	return &watch{describe: describe, insts: map[string]*monitor.Instance{}, states: map[string]monitor.State{}, since: time.Now()}
}

func (w *watch) current() monStatus { return monStatus(w.status.Load()) }

// update makes the running instances match rule; specs are the compiled
// monitors by name and target gives each monitor's probe address. Instances
// to stop are returned so the caller stops them without holding locks their
// callbacks may need.
func (w *watch) update(rule MonitorRule, specs map[string]*monitor.Spec, target func(string) netip.AddrPort) (stale []*monitor.Instance) {
	w.mu.Lock()
	w.rule = rule
	want := map[string]bool{}
	for _, name := range rule.Names {
		want[name] = true
		spec, tgt := specs[name], target(name)
		if in := w.insts[name]; in != nil {
			if in.Spec().Equal(spec) && in.Target() == tgt {
				continue
			}
			stale = append(stale, in)
			delete(w.states, name)
		}
		name := name
		ref := new(*monitor.Instance)
		*ref = monitor.Start(spec, tgt, func(s monitor.State) { w.report(name, ref, s) })
		w.insts[name] = *ref
	}
	for name, in := range w.insts {
		if !want[name] {
			stale = append(stale, in)
			delete(w.insts, name)
			delete(w.states, name)
		}
	}
	old, now := w.recompute()
	w.mu.Unlock()
	if old != now && w.changed != nil {
		w.changed(old, now)
	}
	return stale
}

// stopAll stops every instance (the object left the configuration).
func (w *watch) stopAll() []*monitor.Instance {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*monitor.Instance
	for name, in := range w.insts {
		out = append(out, in)
		delete(w.insts, name)
	}
	w.rule = MonitorRule{}
	return out
}

// resume lifts manual-resume holds.
func (w *watch) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range w.insts {
		in.Resume()
	}
}

func (w *watch) report(name string, ref **monitor.Instance, s monitor.State) {
	w.mu.Lock()
	if w.insts[name] != *ref {
		w.mu.Unlock()
		return // a replaced instance's last word
	}
	w.states[name] = s
	since := w.since
	old, now := w.recompute()
	var line string
	if old != now {
		line = w.logLine(now, old, since)
	}
	w.mu.Unlock()
	if old != now {
		if w.logf != nil {
			w.logf(now == monDown, line)
		}
		if w.changed != nil {
			w.changed(old, now)
		}
	}
}

// recompute combines the instance states by the rule; w.mu is held.
func (w *watch) recompute() (old, now monStatus) {
	old = w.current()
	names := w.rule.Names
	up, down, disabled, locked := 0, 0, false, false
	for _, n := range names {
		s := w.states[n]
		switch s.Status {
		case monitor.Up:
			up++
			disabled = disabled || s.Disabled
		case monitor.Down:
			down++
			locked = locked || s.Locked
		}
	}
	need := len(names)
	if w.rule.MinUp > 0 {
		need = w.rule.MinUp
	}
	switch {
	case len(names) == 0:
		now = monUnchecked
	case up >= need:
		now = monUp
	case len(names)-down < need:
		now = monDown
	default:
		now = monChecking
	}
	w.disabled.Store(disabled && now == monUp)
	w.locked = locked && now == monDown
	w.status.Store(int32(now))
	if now != old {
		w.since = time.Now()
	}
	return old, now
}

// logLine words a status change like BIG-IP's ltm log; w.mu is held.
func (w *watch) logLine(now, old monStatus, since time.Time) string {
	names := append([]string(nil), w.rule.Names...)
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		s := w.states[n]
		p := n + ": " + s.Status.String()
		if s.Status == monitor.Down && s.LastError != "" {
			p += "; last error: " + n + ": " + s.LastError + " @" + s.Since.Format("2006/01/02 15:04:05") + ". "
		}
		parts = append(parts, p)
	}
	was := old.String()
	return fmt.Sprintf("%s monitor status %s. [ %s ]  [ was %s for %s ]",
		w.describe, now, strings.Join(parts, ", "), was, hms(time.Since(since)))
}

// hms formats a duration as BIG-IP's logs do: 0hr:5mins:2sec.
func hms(d time.Duration) string {
	s := int(d.Seconds())
	mins := "mins"
	if s/60%60 == 1 {
		mins = "min"
	}
	return fmt.Sprintf("%dhr:%d%s:%dsec", s/3600, s/60%60, mins, s%60)
}
