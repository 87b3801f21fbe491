package state

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/monitor"
)

// MonStatus is a monitor rule's combined verdict, cached for the hot path.
type MonStatus int32

const (
	MonUnchecked MonStatus = iota // no monitor
	MonChecking                   // no verdict yet
	MonUp
	MonDown
)

// String is the status as shows print it.
func (s MonStatus) String() string {
	return [...]string{"unchecked", "checking", "up", "down"}[s]
}

// Watch runs the monitor instances of one member or node and combines their
// verdicts by the monitor rule. Its status survives commits that leave the
// rule and the monitors unchanged.
type Watch struct {
	// describe names the object in log lines: "Pool /Common/p member
	// /Common/10.1.1.1:80" or "Node /Common/n address 10.1.1.1".
	describe string
	// Changed is called (outside the lock) when the combined status moves.
	Changed func(old, new MonStatus)
	Logf    func(down bool, line string)
	// Trace receives the probe lines of monitors with debug, and of
	// every monitor of an object with logging (SetLogging).
	Trace func(line string)

	status   atomic.Int32 // MonStatus
	Disabled atomic.Bool  // some monitor's recv-disable matched
	dynRatio atomic.Int32 // the snmp-dca monitors' dynamic ratio; 0: none

	mu     sync.Mutex
	rule   config.MonitorRule
	insts  map[string]*monitor.Instance
	states map[string]monitor.State
	since  time.Time
	locked bool
	// passive are the rule's inband monitors (inband.go); inband is the
	// first, which the proxy tells of each connection.
	passive map[string]*monitor.Passive
	inband  atomic.Pointer[monitor.Passive]
	// ruleDown is a rule's LB::down: the object is down until a probe
	// of one of its monitors, asked for at the mark, finds it up, or a
	// rule's LB::up; markSeq tells a later mark's probes from an
	// earlier one's.
	ruleDown bool
	markSeq  uint64
	// markProbing: a down mark waits for a probe to find the object up,
	// so a rule marking it down again (each failed request may) adds
	// nothing and asks for no more probes.
	markProbing bool
	marked      atomic.Bool // ruleDown, for the shows

	// logging (under mu): every probe is traced (a node's logging).
	logging bool
}

// MarkedDown reports whether a rule's LB::down holds the object down.
func (w *Watch) MarkedDown() bool { return w.marked.Load() }

// NewWatch makes the watch of one object; describe names it in log lines.
func NewWatch(describe string) *Watch {
	return &Watch{describe: describe, insts: map[string]*monitor.Instance{}, states: map[string]monitor.State{}, since: time.Now()}
}

// Current is the combined verdict, read without a lock on the data path.
func (w *Watch) Current() MonStatus { return MonStatus(w.status.Load()) }

// DynamicRatio is the dynamic ratio the object's snmp-dca monitors last
// weighed (the lowest when several do [M]), 0 when none gives one; read
// without a lock on the data path.
func (w *Watch) DynamicRatio() int { return int(w.dynRatio.Load()) }

// Rule is the monitor rule the watch runs.
func (w *Watch) Rule() config.MonitorRule {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rule
}

// SetLogging says whether every probe of the object's monitors is
// traced (a node's `logging enabled`), from the next Update on.
func (w *Watch) SetLogging(on bool) {
	w.mu.Lock()
	w.logging = on
	w.mu.Unlock()
}

// traceFor is the trace an instance of spec gets: Trace when the spec
// has debug or the object logging, else none. The caller holds w.mu.
func (w *Watch) traceFor(spec *monitor.Spec) func(string) {
	if w.Trace == nil || spec == nil || !spec.Debug && !w.logging {
		return nil
	}
	return w.Trace
}

// Update makes the running instances match rule; specs are the compiled
// monitors by name and target gives each monitor's probe address. Instances
// to stop are returned so the caller stops them without holding locks their
// callbacks may need.
func (w *Watch) Update(rule config.MonitorRule, specs map[string]*monitor.Spec, target func(string) netip.AddrPort) (stale []*monitor.Instance) {
	w.mu.Lock()
	w.rule = rule
	want := map[string]bool{}
	restarted := false
	for _, name := range rule.Names {
		want[name] = true
		spec, tgt := specs[name], target(name)
		if spec != nil && spec.Type == monitor.Inband {
			w.updatePassive(name, spec) // inband.go
			continue
		}
		tr := w.traceFor(spec)
		if in := w.insts[name]; in != nil {
			if in.Spec().Equal(spec) && in.Target() == tgt {
				in.SetTrace(tr) // logging may have changed
				continue
			}
			stale = append(stale, in)
			delete(w.states, name)
		}
		name := name
		ref := new(*monitor.Instance)
		*ref = monitor.StartTraced(spec, tgt, func(s monitor.State) { w.report(name, ref, s) }, tr)
		w.insts[name] = *ref
		restarted = true
	}
	for name, in := range w.insts {
		if !want[name] {
			stale = append(stale, in)
			delete(w.insts, name)
			delete(w.states, name)
			restarted = true
		}
	}
	if restarted {
		// The probes a rule's LB::down waits for were the old monitors':
		// the new ones decide from now on.
		w.ruleDown, w.markProbing = false, false
	}
	w.dropPassive(want)
	old, now := w.recompute()
	w.mu.Unlock()
	if old != now && w.Changed != nil {
		w.Changed(old, now)
	}
	return stale
}

// StopAll stops every instance (the object left the configuration).
func (w *Watch) StopAll() []*monitor.Instance {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*monitor.Instance
	for name, in := range w.insts {
		out = append(out, in)
		delete(w.insts, name)
	}
	w.dropPassive(nil)
	w.rule = config.MonitorRule{}
	return out
}

// Resume lifts manual-Resume holds.
func (w *Watch) Resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range w.insts {
		in.Resume()
	}
}

func (w *Watch) report(name string, ref **monitor.Instance, s monitor.State) {
	w.mu.Lock()
	if w.insts[name] != *ref {
		w.mu.Unlock()
		return // a replaced instance's last word
	}
	w.set(name, s)
}

// set records monitor name's state and, when the member's status changes,
// logs it and tells Changed. The caller holds w.mu; set releases it.
func (w *Watch) set(name string, s monitor.State) {
	w.states[name] = s
	w.settle()
}

// Mark is a rule's LB::down (up false) or LB::up. Down holds the object
// down at once; either way its monitors probe at once, as BIG-IP's do,
// and a probe that finds it up after a down lifts the mark (an object
// without monitors stays down until LB::up). Passive (inband) monitors
// do not probe: their objects too wait for LB::up.
func (w *Watch) Mark(up bool) {
	w.mu.Lock()
	if !up && w.ruleDown && w.markProbing {
		w.mu.Unlock()
		return
	}
	w.ruleDown = !up
	w.markSeq++
	seq := w.markSeq
	insts := make([]*monitor.Instance, 0, len(w.insts))
	for _, in := range w.insts {
		insts = append(insts, in)
	}
	w.markProbing = !up && len(insts) > 0
	w.settle()
	for _, in := range insts {
		if up {
			in.ProbeNow(nil)
			continue
		}
		// Each probe that finds the object down leaves the mark and waits
		// for the next one at the monitor's own interval.
		var told func(bool)
		told = func(ok bool) {
			w.mu.Lock()
			if w.markSeq != seq || !w.ruleDown {
				w.mu.Unlock()
				return
			}
			if !ok {
				w.mu.Unlock()
				in.WhenProbed(told)
				return
			}
			w.ruleDown, w.markProbing = false, false
			w.settle()
		}
		in.ProbeNow(told)
	}
}

// settle recomputes the combined status and, when it changed, logs it
// and tells Changed. The caller holds w.mu; settle releases it.
func (w *Watch) settle() {
	since := w.since
	old, now := w.recompute()
	var line string
	if old != now {
		line = w.logLine(now, old, since)
	}
	w.mu.Unlock()
	if old != now {
		if w.Logf != nil {
			w.Logf(now == MonDown, line)
		}
		if w.Changed != nil {
			w.Changed(old, now)
		}
	}
}

// recompute combines the instance states by the rule; w.mu is held.
func (w *Watch) recompute() (old, now MonStatus) {
	old = w.Current()
	names := w.rule.Names
	up, down, disabled, locked := 0, 0, false, false
	ratio := 0
	for _, n := range names {
		s := w.states[n]
		switch s.Status {
		case monitor.Up:
			up++
			disabled = disabled || s.Disabled
			if r := s.DynamicRatio; r > 0 && (ratio == 0 || r < ratio) {
				ratio = r
			}
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
	case w.ruleDown:
		now = MonDown
	case len(names) == 0:
		now = MonUnchecked
	case up >= need:
		now = MonUp
	case len(names)-down < need:
		now = MonDown
	default:
		now = MonChecking
	}
	w.Disabled.Store(disabled && now == MonUp)
	w.dynRatio.Store(int32(ratio))
	w.marked.Store(w.ruleDown)
	w.locked = locked && now == MonDown
	w.status.Store(int32(now))
	if now != old {
		w.since = time.Now()
	}
	return old, now
}

// logLine words a status change like BIG-IP's ltm log; w.mu is held.
func (w *Watch) logLine(now, old MonStatus, since time.Time) string {
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
	if w.ruleDown {
		parts = append(parts, "iRule LB::down: down")
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

// Probes calls fn for each active monitor the watch runs, with its probe
// address and its last state (checking before its first answer), for
// `show ltm monitor`.
func (w *Watch) Probes(fn func(monitor string, target netip.AddrPort, s monitor.State)) {
	w.mu.Lock()
	type probe struct {
		name   string
		target netip.AddrPort
		s      monitor.State
	}
	ps := make([]probe, 0, len(w.insts))
	for name, in := range w.insts {
		s, ok := w.states[name]
		if !ok {
			s = monitor.State{Status: monitor.Checking}
		}
		ps = append(ps, probe{name, in.Target(), s})
	}
	w.mu.Unlock()
	for _, p := range ps {
		fn(p.name, p.target, p.s)
	}
}
