package rules

import (
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// Scheduler is implemented by a Conn whose host can run a function later,
// found by type assertion as LBInfo is. It is what makes `after ms script`
// asynchronous as on BIG-IP: the command returns an id at once, the event
// goes on, and the script runs later in the connection's context. On a
// Conn without it, `after ms script` keeps running the script at once
// after sleeping, and `after ms -periodic` is a Tcl error.
type Scheduler interface {
	// After calls fn once, d from now, serialised with the connection's
	// events (under the lock the events take), and never once the
	// connection's rule state is released. fn's error is an event's
	// error (the *RuntimeError is already logged): the host resets the
	// connection; otherwise it applies what the script decided (reject,
	// drop, TCP::respond, TCP::close) as after an event. cancel stops a
	// call that has not started; a call already waiting for the lock may
	// still come, which the engine ignores.
	After(d time.Duration, fn func() error) (cancel func())
}

// Blocker is implemented by a Conn whose events run on a goroutine of
// their own, found by type assertion: `after ms` there suspends the event
// for as long as BIG-IP would (up to MaxSuspend each), the wait moving the
// event's deadline. On other Conns (an event loop's, a UDP listener's
// reader, a DNS query) the wait holds up other clients, and stays within
// the interpreter's sleep budget (1 s per event) and the event's deadline.
type Blocker interface {
	MayBlock() bool
}

// mayBlock reports whether the event runs on a connection whose events
// have a goroutine of their own (Blocker).
func mayBlock(in *tcl.Interp) bool {
	s := sessionOf(in)
	if s == nil || s.conn == nil {
		return false
	}
	b, ok := s.conn.(Blocker)
	return ok && b.MayBlock()
}

// MaxSuspend bounds one `after ms` on a Blocker [M: BIG-IP sets none]; a
// longer wait is a Tcl error, as a runaway one would be.
const MaxSuspend = 5 * time.Minute

// afterHook records that a rule uses after (UsesAfter: a host that answers
// inline, the DNS server's UDP readers, gives such a rule's queries a
// goroutine of their own, so that a suspended one does not hold up the
// others), and marks one that suspends an event (`after ms`, no script)
// so that Program.Waits can tell the dataplane.
func afterHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	r.usesAfter = true
	if c.NumWords() != 2 {
		return nil
	}
	if w, lit := c.Literal(1); lit && (w == "cancel" || w == "info" || w == "idle") {
		return nil
	}
	r.waits = true
	return nil
}

// MaxPendingAfters bounds the scripts one connection may have waiting,
// so that a rule scheduling in a loop (or a periodic script scheduling
// more) cannot grow the proxy's timers without limit.
const MaxPendingAfters = 64

// afterEntry is one script scheduled with `after ms script`.
type afterEntry struct {
	id       string
	script   tcl.Value
	d        time.Duration
	periodic bool
	cancel   func()
	// h, ev and ri are the handler and event that scheduled the script:
	// it runs in their name (log lines, error messages).
	h  *Handler
	ev Event
	ri int
}

// afterState is a connection's pending scripts, made at its first
// asynchronous `after`.
type afterState struct {
	seq     int
	pending []*afterEntry // in the order they were scheduled
	current *afterEntry   // the script running, nil between scripts
}

func (a *afterState) find(id string) int {
	for i, e := range a.pending {
		if e.id == id {
			return i
		}
	}
	return -1
}

func (a *afterState) drop(i int) {
	e := a.pending[i]
	a.pending = append(a.pending[:i], a.pending[i+1:]...)
	if e.cancel != nil {
		e.cancel()
	}
}

// cancelAfters stops every pending script; Release calls it, as a
// connection's scripts end with it.
func (s *ConnState) cancelAfters() {
	a := s.afters
	if a == nil {
		return
	}
	for _, e := range a.pending {
		if e.cancel != nil {
			e.cancel()
		}
	}
	s.afters = nil
}

// PendingAfters is the number of scripts waiting on the connection, for
// tests and diagnostics.
func (s *ConnState) PendingAfters() int {
	if s.afters == nil {
		return 0
	}
	return len(s.afters.pending)
}

// UsesAfter reports whether the rule calls after anywhere (a when block,
// a proc): its events may suspend.
func (r *Rule) UsesAfter() bool { return r.usesAfter }

// cmdAfter is F5's after: `after ms` waits (suspending the event, bounded
// by its budget); `after ms ?-periodic? script` schedules the script on a
// Conn that is a Scheduler and returns its id; `after cancel` and
// `after info` act on the scheduled scripts. On a Conn without a
// scheduler (RULE_INIT, tests, a host that offers none) the script runs
// at once after the delay, as Tcl's after without an event loop, and
// -periodic is a Tcl error.
func cmdAfter(core tcl.CmdFunc) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) < 2 {
			return core(in, args)
		}
		s := sessionOf(in)
		switch args[1].String() {
		case "cancel":
			if len(args) < 3 {
				return tcl.Empty, tcl.WrongArgs("after cancel id|-current|-all ...")
			}
			if s != nil {
				s.afterCancel(args[2:])
			}
			return tcl.Empty, nil
		case "info":
			return s.afterInfo(args[2:])
		case "idle":
			return core(in, args)
		}
		if len(args) == 2 {
			if mayBlock(in) {
				return suspend(in, args[1])
			}
			return core(in, args) // after ms: wait within the budget
		}
		periodic := args[2].String() == "-periodic"
		body := args[2:]
		if periodic {
			body = args[3:]
			if len(body) == 0 {
				return tcl.Empty, tcl.WrongArgs("after ms -periodic script")
			}
		}
		var sched Scheduler
		if s != nil && s.conn != nil && s.cur != nil {
			sched, _ = s.conn.(Scheduler)
		}
		if sched == nil {
			if periodic {
				return tcl.Empty, tcl.Errorf("after -periodic: not supported: this connection has no timer to repeat a script")
			}
			return core(in, args)
		}
		ms, err := strconv.ParseInt(args[1].String(), 0, 64)
		if err != nil {
			return tcl.Empty, tcl.Errorf("bad argument %q: must be cancel, idle, info, or an integer", args[1].String())
		}
		d := time.Duration(max(ms, 0)) * time.Millisecond
		if periodic && d <= 0 {
			return tcl.Empty, tcl.Errorf("after %d -periodic: the period must be at least 1 ms", ms)
		}
		script := body[0]
		if len(body) > 1 {
			script = tcl.Str(concatArgs(body))
		}
		return s.schedule(sched, d, periodic, script)
	}
}

// suspend is `after ms` on a Blocker: the event waits, nothing else does.
func suspend(in *tcl.Interp, arg tcl.Value) (tcl.Value, error) {
	ms, err := strconv.ParseInt(arg.String(), 0, 64)
	if err != nil {
		return tcl.Empty, tcl.Errorf("bad argument %q: must be cancel, idle, info, or an integer", arg.String())
	}
	d := time.Duration(max(ms, 0)) * time.Millisecond
	if d > MaxSuspend {
		return tcl.Empty, tcl.Errorf("after %d: waits longer than %v", ms, MaxSuspend)
	}
	in.Suspend(d)
	return tcl.Empty, nil
}

// concatArgs joins words as Tcl's concat does for after's script.
func concatArgs(vs []tcl.Value) string {
	words := make([]string, len(vs))
	for i, v := range vs {
		words[i] = strings.TrimSpace(v.String())
	}
	return strings.Join(words, " ")
}

// schedule adds a script to the connection's pending ones.
func (s *ConnState) schedule(sched Scheduler, d time.Duration, periodic bool, script tcl.Value) (tcl.Value, error) {
	a := s.afters
	if a == nil {
		a = &afterState{}
		s.afters = a
	}
	if len(a.pending) >= MaxPendingAfters {
		return tcl.Empty, tcl.Errorf("after: %d scripts are already pending on this connection (at most %d); cancel one with after cancel", len(a.pending), MaxPendingAfters)
	}
	a.seq++
	e := &afterEntry{id: "after#" + strconv.Itoa(a.seq), script: forceString(script), d: d, periodic: periodic, h: s.cur, ev: s.event, ri: s.curIdx}
	a.pending = append(a.pending, e)
	e.cancel = sched.After(d, func() error { return s.fireAfter(a, e) })
	return tcl.Str(e.id), nil
}

// fireAfter runs a scheduled script; the host calls it under the
// connection's event lock. A script cancelled meanwhile (its timer had
// already fired), or one of a released state, is not run.
func (s *ConnState) fireAfter(a *afterState, e *afterEntry) error {
	if s.afters != a {
		return nil
	}
	i := a.find(e.id)
	if i < 0 || a.pending[i] != e {
		return nil
	}
	if !e.periodic {
		a.pending = append(a.pending[:i], a.pending[i+1:]...)
	}
	steps, timeout := s.prog.env.budget()
	s.event, s.cur, s.curIdx, s.side, s.ended = e.ev, e.h, e.ri, e.ev.side(), false
	a.current = e
	s.in.SetBudgetAfter(steps, monoEpoch, time.Since(monoEpoch)+timeout)
	_, err := s.in.EvalValue(e.script)
	a.current = nil
	if err != nil && !tcl.IsReturn(err) {
		if e.h == nil {
			s.cur = nil
			return err
		}
		return s.fail(e.h, err)
	}
	s.cur = nil
	if e.periodic && s.afters == a && !s.ended {
		if i := a.find(e.id); i >= 0 && a.pending[i] == e {
			if sched, ok := s.conn.(Scheduler); ok {
				e.cancel = sched.After(e.d, func() error { return s.fireAfter(a, e) })
			}
		}
	}
	return nil
}

// afterCancel is `after cancel id ...|-current|-all`; unknown ids are
// ignored, as Tcl and BIG-IP do.
func (s *ConnState) afterCancel(ids []tcl.Value) {
	a := s.afters
	if a == nil {
		return
	}
	for _, v := range ids {
		switch id := v.String(); id {
		case "-all":
			for len(a.pending) > 0 {
				a.drop(len(a.pending) - 1)
			}
		case "-current":
			if a.current != nil {
				if i := a.find(a.current.id); i >= 0 {
					a.drop(i)
				}
			}
		default:
			if i := a.find(id); i >= 0 {
				a.drop(i)
			}
		}
	}
}

// afterInfo is `after info ?id ...?`: without ids the pending ids, in the
// order they were scheduled; with one its script, with several the list
// of their scripts.
func (s *ConnState) afterInfo(ids []tcl.Value) (tcl.Value, error) {
	var a *afterState
	if s != nil {
		a = s.afters
	}
	if len(ids) == 0 {
		if a == nil {
			return tcl.Empty, nil
		}
		l := make([]tcl.Value, len(a.pending))
		for i, e := range a.pending {
			l[i] = tcl.Str(e.id)
		}
		return tcl.List(l...), nil
	}
	out := make([]tcl.Value, 0, len(ids))
	for _, v := range ids {
		i := -1
		if a != nil {
			i = a.find(v.String())
		}
		if i < 0 {
			return tcl.Empty, tcl.Errorf("after info: event %q doesn't exist", v.String())
		}
		out = append(out, a.pending[i].script)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return tcl.List(out...), nil
}
