package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/daemon/tmshscript"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// The kinds of tmsh scripting (objects/kinds_script.go).
var (
	cliScript          = schema.MustKind("cli script")
	cliScriptBody      = cliScript.MustProp("definition")
	icallScript        = schema.MustKind("sys icall script")
	icallScriptBody    = icallScript.MustProp("definition")
	icallPeriodic      = schema.MustKind("sys icall handler periodic")
	icallPerpetual     = schema.MustKind("sys icall handler perpetual")
	icallTriggered     = schema.MustKind("sys icall handler triggered")
	periodicInterval   = icallPeriodic.MustProp("interval")
	periodicFirst      = icallPeriodic.MustProp("first-occurrence")
	periodicLast       = icallPeriodic.MustProp("last-occurrence")
	triggeredSubs      = icallTriggered.MustProp("subscriptions")
	perpetualSubs      = icallPerpetual.MustProp("subscriptions")
	subEventName       = triggeredSubs.Sub.MustProp("event-name")
	subFilters         = triggeredSubs.Sub.MustProp("filters")
	filterValue        = subFilters.Sub.MustProp("value")
	filterAlgorithm    = subFilters.Sub.MustProp("match-algorithm")
	icallHandlerKinds  = []*objects.Kind{icallPeriodic, icallPerpetual, icallTriggered}
	icallOccurrenceFmt = "2006-01-02:15:04:05"
)

// Bounds of script runs [M: F5 documents none; these keep a script that
// loops from running for ever inside ltmd, while each tmsh:: command is a
// commit of its own, so no run holds the commit lock between commands].
const (
	// icallRunTimeout bounds one run of a periodic or triggered handler's
	// script; a perpetual handler's runs have no time limit, as its
	// script waits for events for ever (EVENT::get_next), only the
	// command budget [M].
	icallRunTimeout = 60 * time.Second
	// cliRunTimeout bounds run cli script.
	cliRunTimeout = 10 * time.Minute
	// perpetualRestart is the wait before a perpetual handler's script,
	// having ended, runs again.
	perpetualRestart = time.Second
	// triggeredQueue is how many events wait for a triggered handler busy
	// with an earlier one; more are dropped with a log line.
	triggeredQueue = 64
	// maxScriptDepth bounds scripts running scripts (tmsh::run cli script).
	maxScriptDepth = 8
)

// scripts keeps the compiled cli and iCall scripts of the running
// configuration and runs the iCall handlers.
type scripts struct {
	e *Engine

	mu       sync.Mutex
	compiled map[string]*tmshscript.Script // kind key + " " + name
	plans    map[string]handlerPlan        // the handlers the configuration has
	handlers map[string]*icallHandler      // those running, by the same key
	stats    map[string]*handlerStats      // their counts, by the same key
	closed   bool
	// triggers are the iStats triggers (icall_istats.go), by name;
	// stopWatch stops the goroutine that polls them, nil when none runs.
	triggers map[string]*istatsTrigger
	// stopped are the perpetual handlers `stop` stopped, by key, with
	// the signature they were stopped at: a change of the handler, start,
	// restart or ltmd starting again runs it again [M].
	stopped   map[string]string
	stopWatch context.CancelFunc
	watchDone chan struct{}
	// members is on while a handler takes the pool and member events
	// (icall_builtin.go).
	members memberEvents
}

// handlerStats counts a handler's runs for show sys icall handler; they
// last as long as the handler is in the configuration.
type handlerStats struct {
	runs, failures atomic.Uint64
	last           atomic.Int64 // start of the last run, Unix nanoseconds
	lastErr        atomic.Pointer[string]
}

// icallHandler is one running handler: a goroutine that runs its script
// when its turn comes, one run at a time.
type icallHandler struct {
	name   string
	sig    string // what it was started from: a change of it restarts the handler
	cancel context.CancelFunc
	done   chan struct{}
	// events feeds a triggered handler, or a perpetual one's
	// EVENT::get_next; subs are what it takes.
	events chan *tmshscript.Event
	subs   []icallSub
}

type icallSub struct {
	event   string
	filters []icallFilter
}

type icallFilter struct {
	name, value, algorithm string
	re                     *regexp.Regexp
	prefix                 netip.Prefix
}

// scriptsHook compiles the configuration's scripts at each commit,
// refusing one that does not compile with its line and column, checks the
// handlers, and starts and stops the handlers as the configuration says.
type scriptsHook struct{ e *Engine }

// scriptsChange is a prepared set of scripts and handlers.
type scriptsChange struct {
	s        *scripts
	compiled map[string]*tmshscript.Script
	handlers map[string]handlerPlan
	triggers map[string]*istatsTrigger
	// events are the built-in SYS_CONFIG_ events the commit raises
	// (icall_builtin.go), computed only when a handler takes them.
	events []*tmshscript.Event
	// what Commit replaced, for Abort
	committed    bool
	prevCompiled map[string]*tmshscript.Script
	prevPlans    map[string]handlerPlan
	prevTriggers map[string]*istatsTrigger
}

// handlerPlan is a handler as the configuration wants it running.
type handlerPlan struct {
	kind    *objects.Kind
	name    string
	sig     string
	script  *tmshscript.Script
	every   time.Duration
	first   time.Time
	last    time.Time
	subs    []icallSub
	args    [][2]string // arguments { NAME { value V } }, in order
	running bool        // status active
}

// Prepare implements Hook.
func (h scriptsHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	s := h.e.scripts
	c := &scriptsChange{s: s, compiled: map[string]*tmshscript.Script{}, handlers: map[string]handlerPlan{}}
	s.mu.Lock()
	prev := s.compiled
	s.mu.Unlock()
	for _, kc := range []struct {
		k    *objects.Kind
		def  *objects.Prop
		kind tmshscript.Kind
	}{{cliScript, cliScriptBody, tmshscript.CLI}, {icallScript, icallScriptBody, tmshscript.ICall}} {
		for _, o := range cfg.Of(kc.k) {
			key := kc.k.Key() + " " + o.Name
			body := kc.def.Str(o)
			if p := prev[key]; p != nil && p.Source == body {
				c.compiled[key] = p
				continue
			}
			sc, err := tmshscript.Compile(o.Name, body, kc.kind)
			if err != nil {
				ce := &objects.ConfigError{Code: "01070151", Msg: "Script (" + o.Name + ") error: " + strings.TrimPrefix(err.Error(), "script ("+o.Name+") error ")}
				if was := objAt(old, kc.k, o.Name); old == nil || was != nil && kc.def.Str(was) == body {
					// Stored, or unchanged since it was: kept, not run,
					// and no bar to unrelated changes.
					if opts.Warn != nil {
						opts.Warn(ce.Error() + "; the script is kept and does not run")
					}
					continue
				}
				return nil, ce
			}
			c.compiled[key] = sc
		}
	}
	for _, k := range icallHandlerKinds {
		for _, o := range cfg.Of(k) {
			p, err := planHandler(k, o, c.compiled)
			if err != nil {
				if was := objAt(old, k, o.Name); old == nil || was != nil && objects.Format(was, objects.PrintOpts{}) == objects.Format(o, objects.PrintOpts{}) {
					if opts.Warn != nil {
						opts.Warn(err.Error() + "; the handler does not run")
					}
					continue
				}
				return nil, err
			}
			c.handlers[k.Key()+" "+o.Name] = p
		}
	}
	if wantsOf(c.handlers).config {
		c.events = configEvents(old, cfg)
	}
	if err := c.prepareTriggers(old, cfg, opts); err != nil {
		return nil, err
	}
	if err := noEventObjects(old, cfg, opts); err != nil {
		return nil, err
	}
	return c, nil
}

// noEventObjects refuses a new `sys icall event` object: F5's reference
// gives that component one command, generate, and no object to create.
// One already stored (by an older openltm, which kept it verbatim) is
// kept with a warning.
func noEventObjects(old, cfg *objects.Config, opts CommitOptions) error {
	const prefix = "?sys icall event "
	was := map[string]bool{}
	if old != nil {
		for _, o := range old.Unknown() {
			was[o.Key()] = true
		}
	}
	for _, o := range cfg.Unknown() {
		k := o.Key()
		if !strings.HasPrefix(k, prefix) || was[k] {
			continue
		}
		if old == nil {
			if opts.Warn != nil {
				opts.Warn("sys icall event " + strings.TrimPrefix(k, prefix) + " is no object at F5 (events are generated: generate sys icall event NAME context { ... }); kept and never used")
			}
			continue
		}
		return objects.Invalid("sys icall event is not an object to create: an event is generated, generate sys icall event NAME context { { name N value V } }")
	}
	return nil
}

// objAt is cfg's object of that kind and name, nil without cfg.
func objAt(cfg *objects.Config, k *objects.Kind, name string) *objects.Object {
	if cfg == nil {
		return nil
	}
	return cfg.Get(k, name)
}

// planHandler reads one handler, refusing what cannot run.
func planHandler(k *objects.Kind, o *objects.Object, compiled map[string]*tmshscript.Script) (handlerPlan, error) {
	bad := func(format string, args ...any) error {
		return &objects.ConfigError{Code: "01070734", Msg: "Configuration error: " + k.Key() + " " + o.Name + ": " + fmt.Sprintf(format, args...)}
	}
	p := handlerPlan{kind: k, name: o.Name, running: o.Str("status") != "inactive" && o.Str("status") != "suspend"}
	sname := o.Str("script")
	if sname == "" || sname == "none" {
		return p, bad("a handler needs a script (script NAME, a sys icall script)")
	}
	p.script = compiled[icallScript.Key()+" "+sname]
	if p.script == nil {
		return p, bad("script %s is not a sys icall script that compiles", sname)
	}
	p.sig = objects.Format(o, objects.PrintOpts{}) + "\x00" + p.script.Source
	if ap := k.MustProp("arguments"); ap.Get(o) != nil {
		for _, it := range ap.Get(o).Items {
			p.args = append(p.args, [2]string{it.Name, ap.Sub.MustProp("value").StrIn(it)})
		}
	}
	switch k {
	case icallPeriodic:
		n := periodicInterval.Str(o)
		var secs int
		if _, err := fmt.Sscan(n, &secs); err != nil || secs < 1 {
			return p, bad("interval must be a number of seconds, 1 or more (%q)", n)
		}
		p.every = time.Duration(secs) * time.Second
		for _, t := range []struct {
			prop *objects.Prop
			at   *time.Time
		}{{periodicFirst, &p.first}, {periodicLast, &p.last}} {
			v := t.prop.Str(o)
			if v == "" || v == "none" {
				continue
			}
			at, err := time.ParseInLocation(icallOccurrenceFmt, v, time.Local)
			if err != nil {
				return p, bad("%s must be a date and time, YYYY-MM-DD:HH:MM:SS (%q)", t.prop.Name, v)
			}
			*t.at = at
		}
	case icallTriggered, icallPerpetual:
		subsProp := triggeredSubs
		if k == icallPerpetual {
			subsProp = perpetualSubs
		}
		if v := subsProp.Get(o); v != nil {
			for _, it := range v.Items {
				sub := icallSub{event: subEventName.StrIn(it)}
				if sub.event == "" {
					return p, bad("subscription %s needs an event-name", it.Name)
				}
				if fv := subFilters.In(it); fv != nil {
					for _, f := range fv.Items {
						fl := icallFilter{name: f.Name, value: filterValue.StrIn(f), algorithm: filterAlgorithm.StrIn(f)}
						if fl.algorithm == "" {
							fl.algorithm = "exact"
						}
						switch fl.algorithm {
						case "regex":
							re, err := regexp.Compile(fl.value)
							if err != nil {
								return p, bad("filter %s: %q is not a regular expression: %v", f.Name, fl.value, err)
							}
							fl.re = re
						case "subnet":
							pr, err := netip.ParsePrefix(fl.value)
							if err != nil {
								return p, bad("filter %s: %q is not an address/prefix", f.Name, fl.value)
							}
							fl.prefix = pr
						}
						sub.filters = append(sub.filters, fl)
					}
				}
				p.subs = append(p.subs, sub)
			}
		}
	}
	return p, nil
}

// Commit implements Change: handlers gone, stopped or changed stop (their
// run in progress is cancelled at its next tmsh:: command or sleep, or
// its time limit), new and changed ones start.
func (c *scriptsChange) Commit() error {
	c.prevCompiled, c.prevPlans = c.s.apply(c.compiled, c.handlers)
	c.prevTriggers = c.s.applyTriggers(c.triggers)
	c.s.setMemberEvents(wantsOf(c.handlers).member)
	c.committed = true
	for _, ev := range c.events {
		c.s.generate(ev)
	}
	return nil
}

// Abort implements Change: after Commit, the scripts and handlers of the
// configuration before it are brought back.
func (c *scriptsChange) Abort() {
	if c.committed {
		c.s.apply(c.prevCompiled, c.prevPlans)
		c.s.applyTriggers(c.prevTriggers)
		c.s.setMemberEvents(wantsOf(c.prevPlans).member)
		c.committed = false
	}
}

// apply makes compiled and plans the running scripts and handlers, and
// returns those they replace.
func (s *scripts) apply(compiled map[string]*tmshscript.Script, plans map[string]handlerPlan) (map[string]*tmshscript.Script, map[string]handlerPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prevCompiled, prevPlans := s.compiled, s.plans
	s.compiled, s.plans = compiled, plans
	for key := range s.stats {
		if _, ok := plans[key]; !ok {
			delete(s.stats, key)
		}
	}
	if s.closed {
		return prevCompiled, prevPlans
	}
	for key, h := range s.handlers {
		if p, ok := plans[key]; !ok || !p.running || p.sig != h.sig {
			h.cancel()
			delete(s.handlers, key)
		}
	}
	for key, sig := range s.stopped {
		if p, ok := plans[key]; !ok || p.sig != sig {
			delete(s.stopped, key)
		}
	}
	for key, p := range plans {
		if !p.running || s.handlers[key] != nil || s.stopped[key] != "" {
			continue
		}
		st := s.stats[key]
		if st == nil {
			st = &handlerStats{}
			s.stats[key] = st
		}
		s.handlers[key] = s.start(p, st)
	}
	return prevCompiled, prevPlans
}

func newScripts(e *Engine) *scripts {
	return &scripts{e: e, compiled: map[string]*tmshscript.Script{}, handlers: map[string]*icallHandler{}, stats: map[string]*handlerStats{}, stopped: map[string]string{}}
}

// close stops every handler and waits a bounded time for their runs.
func (s *scripts) close() {
	s.mu.Lock()
	s.closed = true
	hs := s.handlers
	s.handlers = map[string]*icallHandler{}
	s.mu.Unlock()
	for _, h := range hs {
		h.cancel()
	}
	s.stopTriggers()
	deadline := time.After(5 * time.Second)
	for _, h := range hs {
		select {
		case <-h.done:
		case <-deadline:
			return
		}
	}
}

// start runs a handler's goroutine.
func (s *scripts) start(p handlerPlan, st *handlerStats) *icallHandler {
	ctx, cancel := context.WithCancel(context.Background())
	h := &icallHandler{name: p.name, sig: p.sig, cancel: cancel, done: make(chan struct{}), subs: p.subs}
	if p.kind == icallTriggered || p.kind == icallPerpetual && len(p.subs) > 0 {
		h.events = make(chan *tmshscript.Event, triggeredQueue)
	}
	go func() {
		defer close(h.done)
		switch p.kind {
		case icallPeriodic:
			s.runPeriodic(ctx, p, st)
		case icallPerpetual:
			for ctx.Err() == nil {
				s.runPerpetual(ctx, p, h.events, st)
				select {
				case <-ctx.Done():
				case <-time.After(perpetualRestart):
				}
			}
		case icallTriggered:
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-h.events:
					s.runOnce(ctx, p, ev, st)
				}
			}
		}
	}()
	return h
}

// runPeriodic runs the script every interval from first-occurrence (or
// one interval after the handler starts) until last-occurrence; a run
// that overruns its interval makes the runs it covered be skipped, never
// run at once [M: F5 is silent].
func (s *scripts) runPeriodic(ctx context.Context, p handlerPlan, st *handlerStats) {
	now := time.Now()
	next := now.Add(p.every)
	if !p.first.IsZero() {
		next = p.first
		for next.Before(now) {
			next = next.Add(p.every)
		}
	}
	for {
		if !p.last.IsZero() && next.After(p.last) {
			return
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.runOnce(ctx, p, nil, st)
		now := time.Now()
		for !next.After(now) {
			next = next.Add(p.every)
		}
	}
}

// runPerpetual runs a perpetual handler's script once, without a time
// limit, its EVENT::get_next taking the events of the handler's
// subscriptions from events (nil: the handler subscribes to none, and
// EVENT::get_next waits until it stops).
func (s *scripts) runPerpetual(ctx context.Context, p handlerPlan, events <-chan *tmshscript.Event, st *handlerStats) {
	next := func(ctx context.Context) (*tmshscript.Event, error) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("handler %s stopped", p.name)
		case ev := <-events:
			return ev, nil
		}
	}
	s.run(ctx, p, nil, next, 0, st)
}

// runOnce runs the handler's script once; a failure is logged and the
// handler goes on.
func (s *scripts) runOnce(ctx context.Context, p handlerPlan, ev *tmshscript.Event, st *handlerStats) {
	s.run(ctx, p, ev, nil, icallRunTimeout, st)
}

// run runs the handler's script once, for ev (nil: none), with next for
// EVENT::get_next (nil: the command is refused).
func (s *scripts) run(ctx context.Context, p handlerPlan, ev *tmshscript.Event, next func(context.Context) (*tmshscript.Event, error), timeout time.Duration, st *handlerStats) {
	e := s.e
	st.runs.Add(1)
	st.last.Store(time.Now().UnixNano())
	sess := e.NewSession("root").(*Session) // [M] iCall scripts run as root, in /Common
	sess.depth = 1
	err := p.script.Run(ctx, tmshscript.Env{
		Shell:   sess,
		Out:     logWriter{e: e, severity: "info"},
		Log:     e.scriptLog,
		Timeout: timeout,
		Event:   ev,
		Args:    p.args,
		Next:    next,
		Handler: p.name,
	}, nil)
	if err != nil {
		st.failures.Add(1)
		msg := err.Error()
		st.lastErr.Store(&msg)
	}
	if err != nil && ctx.Err() == nil {
		e.scriptLog("err", fmt.Sprintf("014f0013:3: Script (%s) generated this Tcl error: (%v) in handler %s", p.script.Name, err, p.name))
	}
	sess.Close()
}

// scriptLog writes a script's tmsh::log line to the ltm log.
func (e *Engine) scriptLog(severity, msg string) {
	if e.logs != nil {
		e.logs.Log("local0."+severity, msg)
	}
	e.log.Debug("script log", "severity", severity, "msg", msg)
}

// logWriter sends an iCall script's puts lines to the ltm log [M: BIG-IP
// discards a handler's standard output; the log keeps it visible].
type logWriter struct {
	e        *Engine
	severity string
}

func (w logWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" {
			w.e.scriptLog(w.severity, l)
		}
	}
	return len(b), nil
}

// generate queues an event for the triggered handlers that take it; it
// reports how many did.
func (s *scripts) generate(ev *tmshscript.Event) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.handlers {
		if h.events == nil || !h.takes(ev) {
			continue
		}
		select {
		case h.events <- ev:
			n++
		default:
			s.e.scriptLog("warning", fmt.Sprintf("iCall handler %s is busy: event %s dropped (%d waiting)", h.name, ev.Name, triggeredQueue))
		}
	}
	return n
}

// takes reports whether one of the handler's subscriptions takes ev: its
// event name, and every filter matched by the context value of its name.
func (h *icallHandler) takes(ev *tmshscript.Event) bool {
	for _, sub := range h.subs {
		if sub.event != ev.Name {
			continue
		}
		ok := true
		for _, f := range sub.filters {
			ok = ok && f.match(ev)
		}
		if ok {
			return true
		}
	}
	return false
}

func (f icallFilter) match(ev *tmshscript.Event) bool {
	if f.algorithm == "accept-all" {
		return true
	}
	for _, kv := range ev.Context {
		if kv[0] != f.name {
			continue
		}
		switch f.algorithm {
		case "exact":
			return kv[1] == f.value
		case "glob":
			ok, _ := path.Match(f.value, kv[1])
			return ok
		case "regex":
			return f.re.MatchString(kv[1])
		case "subnet":
			a, err := netip.ParseAddr(kv[1])
			return err == nil && f.prefix.Contains(a.Unmap())
		}
	}
	return false
}

// runCLIScript is `run cli script NAME ?args?`: the script runs in a
// session of its own (the caller's user and folder), every tmsh:: command
// a command of that session.
func (s *Session) runCLIScript(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	if len(args) < 1 {
		return synErr(st, []string{"run cli script NAME ?arguments?"}, "run cli script needs a script name")
	}
	nw, ok := args[0].(*grammar.Word)
	if !ok {
		return synErr(args[0], []string{"a cli script name"}, "run cli script needs a script name before { }")
	}
	name := objects.FullPath(s.folder, nw.Text)
	if s.e.Config().Get(cliScript, name) == nil {
		return objects.NotFound(cliScript, name)
	}
	s.e.scripts.mu.Lock()
	sc := s.e.scripts.compiled[cliScript.Key()+" "+name]
	s.e.scripts.mu.Unlock()
	if sc == nil {
		return objects.Invalid("script %s does not compile; fix it with modify cli script %s", name, nw.Text)
	}
	if s.depth >= maxScriptDepth {
		return objects.Invalid("run cli script %s: scripts run %d deep; a script may not run scripts deeper", name, maxScriptDepth)
	}
	var argv []string
	for _, a := range args[1:] {
		switch a := a.(type) {
		case *grammar.Word:
			argv = append(argv, a.Text)
		case *grammar.Block:
			argv = append(argv, strings.TrimSpace(a.Raw))
		}
	}
	child := &Session{e: s.e, user: s.user, folder: s.folder, dir: s.dir, depth: s.depth + 1}
	defer child.Close()
	err := sc.Run(ctx, tmshscript.Env{Shell: child, Out: w, Log: s.e.scriptLog, Timeout: cliRunTimeout, Argv0: nw.Text}, argv)
	s.committed = max(s.committed, child.committed)
	return err
}

// generateEvent is `generate sys icall event NAME context { { name N
// value V } ... }` (also F5's `generate event name NAME ...` form inside
// sys icall, and `{ N V }` pairs).
func (s *Session) generateEvent(st *grammar.Statement, args []grammar.Node) error {
	usage := []string{"generate sys icall event NAME context { { name N value V } ... }"}
	rest, ok := s.afterKind(args, "sys", "icall", "event")
	if !ok {
		return synErr(st, usage, "only sys icall event can be generated")
	}
	ev := &tmshscript.Event{}
	for i := 0; i < len(rest); i++ {
		wd, ok := rest[i].(*grammar.Word)
		switch {
		case ok && wd.Text == "name" && ev.Name == "" && i+1 < len(rest):
			n, ok := rest[i+1].(*grammar.Word)
			if !ok {
				return synErr(rest[i+1], usage, "name takes the event's name")
			}
			ev.Name = n.Text
			i++
		case ok && wd.Text == "context" && i+1 < len(rest):
			b, ok := rest[i+1].(*grammar.Block)
			if !ok {
				return synErr(rest[i+1], usage, "context takes a { } block of { name N value V } pairs")
			}
			for _, it := range b.Items {
				pair, ok := it.(*grammar.Block)
				if !ok {
					return synErr(it, usage, "each context entry is a { name N value V } block")
				}
				pw := pair.Words()
				switch {
				case len(pw) == 4 && pw[0] == "name" && pw[2] == "value":
					ev.Context = append(ev.Context, [2]string{pw[1], pw[3]})
				case len(pw) == 2:
					ev.Context = append(ev.Context, [2]string{pw[0], pw[1]})
				default:
					return synErr(pair, usage, "a context entry is { name N value V }")
				}
			}
			i++
		case ok && ev.Name == "":
			ev.Name = wd.Text
		default:
			return synErr(rest[i], usage, "unexpected %s", grammar.RenderOneLine(rest[i]))
		}
	}
	if ev.Name == "" {
		return synErr(st, usage, "an event needs a name (it may not be empty)")
	}
	s.e.scripts.generate(ev)
	return nil
}

// afterKind returns the nodes after kind's words when args name it, typed
// in full (or from /) or under the current module.
func (s *Session) afterKind(args []grammar.Node, kind ...string) ([]grammar.Node, bool) {
	ws := headWords(args)
	if len(ws) > 0 && strings.HasPrefix(ws[0], "/") {
		ws = append([]string{strings.TrimPrefix(ws[0], "/")}, ws[1:]...)
		if hasPrefix(ws, kind) {
			return args[len(kind):], true
		}
		return nil, false
	}
	for i := 0; i <= len(s.module); i++ {
		typed := len(kind) - i
		if typed < 1 || typed > len(ws) || !hasPrefix(s.module, kind[:i]) || len(s.module) != i && i != 0 {
			continue
		}
		if hasPrefix(ws, kind[i:]) {
			return args[typed:], true
		}
	}
	return nil, false
}

// icallCommands answer show sys icall handler periodic|perpetual|triggered
// [NAME...] (and show sys icall istats-trigger): each handler's status and its runs since it was created or
// ltmd started [M: the layout; F5 documents the command, not its output].
func icallCommands(e *Engine) []RuntimeCommand {
	show := func(k *objects.Kind) RuntimeFunc {
		return func(_ context.Context, _ *Session, names, _ []string, w io.Writer) error {
			cfg := e.Config()
			found := profileNames(e, k, names)
			if len(names) > 0 && len(found) == 0 {
				return objects.NotFound(k, names[0])
			}
			for _, name := range found {
				o := cfg.Get(k, name)
				if o == nil {
					return objects.NotFound(k, name)
				}
				key := k.Key() + " " + name
				e.scripts.mu.Lock()
				st, running := e.scripts.stats[key], e.scripts.handlers[key] != nil
				stopped := e.scripts.stopped[key] != ""
				e.scripts.mu.Unlock()
				status := o.Str("status")
				if status == "" {
					status = "active"
				}
				switch {
				case stopped && status == "active":
					status = "active (stopped: start sys icall handler perpetual " + objects.RelPath("/Common", name) + ")"
				case !running && status == "active":
					status = "active (not running: see the log)"
				}
				var runs, fails uint64
				last, lastErr := "-", "-"
				if st != nil {
					runs, fails = st.runs.Load(), st.failures.Load()
					if ns := st.last.Load(); ns != 0 {
						last = time.Unix(0, ns).Format("2006-01-02 15:04:05")
					}
					if p := st.lastErr.Load(); p != nil {
						lastErr = *p
					}
				}
				title := "Sys::iCall Handler: " + k.Words[len(k.Words)-1] + " " + objects.RelPath("/Common", name)
				bar := strings.Repeat("-", len(title)+2)
				fmt.Fprintf(w, "%s\n%s\n%s\n", bar, title, bar)
				fmt.Fprintf(w, "  %-12s %s\n  %-12s %s\n  %-12s %d\n  %-12s %d\n  %-12s %s\n  %-12s %s\n\n",
					"Status", status, "Script", o.Str("script"), "Runs", runs, "Failures", fails, "Last Run", last, "Last Error", lastErr)
			}
			return nil
		}
	}
	return append([]RuntimeCommand{
		{"show", icallPeriodic.Key(), show(icallPeriodic)},
		{"show", icallPerpetual.Key(), show(icallPerpetual)},
		{"show", icallTriggered.Key(), show(icallTriggered)},
	}, istatsTriggerCommands(e)...)
}

// perpetualCommand answers F5's `start`, `stop` and `restart sys icall
// handler perpetual NAME`: stop ends the handler's script and keeps it
// from running until start, restart (which also runs a stopped or
// running handler's script afresh), a change of the handler or ltmd
// starting again; the configuration is not changed [M: F5's reference
// lists the commands without saying more]. handled is false for other
// commands.
func (s *Session) perpetualCommand(st *grammar.Statement, verb string, args []grammar.Node) (bool, error) {
	if verb != "start" && verb != "stop" && verb != "restart" {
		return false, nil
	}
	rest, ok := s.afterKind(args, "sys", "icall", "handler", "perpetual")
	if !ok {
		if verb == "restart" {
			return false, nil // restart ilx plugin
		}
		return true, synErr(st, []string{verb + " sys icall handler perpetual NAME"}, "%s takes an iCall perpetual handler", verb)
	}
	if len(rest) != 1 {
		return true, synErr(st, []string{verb + " sys icall handler perpetual NAME"}, "%s takes one perpetual handler's name", verb)
	}
	nw, ok := rest[0].(*grammar.Word)
	if !ok {
		return true, synErr(rest[0], []string{"a perpetual handler's name"}, "%s takes a handler's name, not { }", verb)
	}
	name := objects.FullPath(s.folder, nw.Text)
	if s.e.Config().Get(icallPerpetual, name) == nil {
		return true, objects.NotFound(icallPerpetual, name)
	}
	return true, s.e.scripts.control(icallPerpetual.Key()+" "+name, verb)
}

// control stops, starts or restarts a running configuration's handler.
func (sc *scripts) control(key, verb string) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	p, ok := sc.plans[key]
	if !ok {
		return objects.Invalid("%s does not run: its script does not compile or it is refused (see the log)", key)
	}
	if !p.running {
		return objects.Invalid("%s is %s: modify it with status active to run it", key, "inactive")
	}
	if verb != "start" {
		if h := sc.handlers[key]; h != nil {
			h.cancel()
			delete(sc.handlers, key)
		}
		sc.stopped[key] = p.sig
	}
	if verb == "stop" || sc.closed {
		return nil
	}
	delete(sc.stopped, key)
	if sc.handlers[key] == nil {
		st := sc.stats[key]
		if st == nil {
			st = &handlerStats{}
			sc.stats[key] = st
		}
		sc.handlers[key] = sc.start(p, st)
	}
	return nil
}
