// Package tmshscript runs BIG-IP's tmsh scripts: the Tcl bodies of `cli
// script` objects (run by `run cli script NAME args`) and of `sys icall
// script` objects (run by iCall handlers inside ltmd). It sits on the
// interpreter of rules/tcl with a command table of its own, so iRules never
// see the tmsh:: commands; every tmsh:: command that reads or changes the
// configuration is a shell command run through the Shell the host gives
// (the daemon's session), so validation, transactions, partitions and
// permissions are the shell's.
package tmshscript

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// Shell runs one tmsh command line as the shell would, writing what the
// shell prints to w: the daemon's session implements it.
type Shell interface {
	Exec(ctx context.Context, line string, w io.Writer) error
	// Folder is the session's current folder (tmsh::pwd).
	Folder() string
}

// Kind says how a script's body runs.
type Kind int

const (
	// CLI is a `cli script` body: procedures, of which script::init (when
	// defined) and script::run are called.
	CLI Kind = iota
	// ICall is a `sys icall script` definition: run from top to bottom.
	ICall
)

// Event is what triggered an iCall script: EVENT::name and
// EVENT::context.
type Event struct {
	Name    string
	Context [][2]string // name, value pairs in the order generated
}

// Env is what one run of a script acts on.
type Env struct {
	Shell Shell
	// Out receives puts and tmsh::display output; nil discards it.
	Out io.Writer
	// Log writes a tmsh::log line at a syslog severity word (info,
	// notice, warning, err, ...); nil discards it.
	Log func(severity, msg string)
	// Timeout bounds the run (0: none); a run past it stops with an
	// error at its next command.
	Timeout time.Duration
	// Event is the iCall event being handled, nil otherwise.
	Event *Event
	// Args are the handler's arguments (arguments { NAME { value V } }),
	// read as EVENT::context entries beside the event's own [M: F5 gives
	// no other way; an event's pair of the same name wins].
	Args [][2]string
	// Next blocks until the next event a perpetual handler's
	// subscriptions take (EVENT::get_next), returning an error when the
	// handler stops or ctx ends; nil outside a perpetual handler.
	Next func(ctx context.Context) (*Event, error)
	// Handler names the iCall handler running the script (EVENT::handler).
	Handler string
	// Argv0 is tmsh::argv's first element, the script's name as the user
	// typed it; "" is the script's full name.
	Argv0 string
}

// Script is a compiled script, safe to run from several goroutines at once
// (each run has its own interpreter).
type Script struct {
	Name string
	Kind Kind
	// Source is the body it was compiled from: a commit that keeps it
	// keeps the compiled script.
	Source string
	body   *tcl.Script
}

// SyntaxError is a script body that does not compile: where and what.
type SyntaxError struct {
	Script    string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("script (%s) error at line %d column %d: %s", e.Script, e.Line, e.Col, e.Msg)
}

// RunError is a script that stopped on a Tcl error: the message and the
// line and column of the command that raised it.
type RunError struct {
	Script    string
	Line, Col int // 0 when unknown
	Msg       string
}

func (e *RunError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("script did not successfully complete: (%s) in script %s", e.Msg, e.Script)
	}
	return fmt.Sprintf("script did not successfully complete: (%s) in script %s line %d column %d", e.Msg, e.Script, e.Line, e.Col)
}

// commands is the table every script compiles and runs against: the core
// Tcl commands plus tmsh:: and EVENT::.
var commands = sync.OnceValue(func() *tcl.Commands {
	t := tcl.NewCommands()
	// Procedure bodies compile with the script, so that a syntax error in
	// script::run is refused when the script is created, with its line.
	if p := t.Lookup("proc"); p != nil {
		p.Compile = func(c *tcl.Compiler) error { return c.Script(3) }
	}
	registerTmsh(t)
	registerEvent(t)
	registerAfter(t)
	return t
})

// registerAfter makes `after MS` wait on the run's context: a handler
// deleted or a daemon stopping ends a script's sleep at once.
func registerAfter(t *tcl.Commands) {
	orig := t.Lookup("after").Fn
	t.Register("after", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) < 2 {
			return orig(in, args)
		}
		ms, err := args[1].Int64()
		if err != nil || ms <= 0 {
			return orig(in, args)
		}
		st := stateOf(in)
		d := time.Duration(ms) * time.Millisecond
		if dl, ok := st.ctx.Deadline(); ok && time.Until(dl) < d {
			return tcl.Empty, tcl.Errorf("after %d: the script's run would end before the wait", ms)
		}
		tm := time.NewTimer(d)
		select {
		case <-st.ctx.Done():
			tm.Stop()
			return tcl.Empty, tcl.Errorf("script stopped (%v)", st.ctx.Err())
		case <-tm.C:
		}
		if len(args) == 2 {
			return tcl.Empty, nil
		}
		rest := append([]tcl.Value{args[0], tcl.Str("0")}, args[2:]...)
		return orig(in, rest)
	})
}

// Compile reads a script body, refusing one that is not valid Tcl with the
// line and column of the fault.
func Compile(name, body string, kind Kind) (*Script, error) {
	// A check that accepts every command name turns on the compiler's
	// strict mode, in which a nested body that does not compile is an
	// error; the names a script calls are its own procedures as often as
	// commands, and are found when it runs.
	anyName := func(string, *tcl.Source, int) error { return nil }
	s, err := tcl.CompileWith(commands(), anyName, name, body)
	if err != nil {
		var se *tcl.SyntaxError
		if errors.As(err, &se) {
			return nil, &SyntaxError{Script: name, Line: se.Line, Col: se.Col, Msg: se.Msg}
		}
		return nil, &SyntaxError{Script: name, Msg: err.Error()}
	}
	if kind == CLI {
		if text, ok := withoutMetadata(s, body); ok {
			if s, err = tcl.CompileWith(commands(), anyName, name, text); err != nil {
				return nil, &SyntaxError{Script: name, Msg: err.Error()}
			}
		}
	}
	return &Script{Name: name, Kind: kind, Source: body, body: s}, nil
}

// cliMetadata are the properties BIG-IP saves inside a cli script's body,
// each alone on a line after the procedures (bigip_script.conf:
// `description "..."`, `total-signing-status not-all-signed`): kept in the
// text, never run as commands.
var cliMetadata = map[string]bool{
	"app-service": true, "description": true, "ignore-verification": true,
	"signature": true, "signing-key": true, "total-signing-status": true,
}

// withoutMetadata blanks the body's top-level metadata lines (positions
// stay as they were); ok is false when it has none.
func withoutMetadata(s *tcl.Script, body string) (string, bool) {
	lines := strings.SplitAfter(body, "\n")
	found := false
	for _, c := range s.TopCommands() {
		if len(c.Words) == 0 || !c.Literal || !cliMetadata[c.Words[0].String()] || c.Line > len(lines) {
			continue
		}
		l := lines[c.Line-1]
		if f := strings.Fields(l); len(f) == 0 || f[0] != c.Words[0].String() {
			continue // not alone on its line: left as written
		}
		lines[c.Line-1] = strings.Repeat(" ", len(strings.TrimRight(l, "\n"))) + l[len(strings.TrimRight(l, "\n")):]
		found = true
	}
	return strings.Join(lines, ""), found
}

// runState is one run's host data, reached by the commands through
// Interp.Data.
type runState struct {
	ctx context.Context
	env Env
	// ev is the event EVENT:: answers for: env.Event, then each one
	// EVENT::get_next returns.
	ev *Event
}

// context is the EVENT::context pairs: the handler's arguments, then the
// event's, an event's pair replacing an argument of its name.
func (st *runState) context() [][2]string {
	if st.ev == nil || len(st.env.Args) == 0 {
		if st.ev == nil {
			return st.env.Args
		}
		return st.ev.Context
	}
	out := make([][2]string, 0, len(st.env.Args)+len(st.ev.Context))
	for _, a := range st.env.Args {
		if !hasName(st.ev.Context, a[0]) {
			out = append(out, a)
		}
	}
	return append(out, st.ev.Context...)
}

func hasName(kvs [][2]string, name string) bool {
	for _, kv := range kvs {
		if kv[0] == name {
			return true
		}
	}
	return false
}

// setEventVars sets $EVENT::name and the $EVENT::context array from the
// current event and the arguments, the array of an earlier event unset.
func (st *runState) setEventVars(in *tcl.Interp) {
	in.UnsetVar("EVENT::context")
	in.UnsetVar("EVENT::name")
	if st.ev != nil {
		in.SetVar("EVENT::name", tcl.Str(st.ev.Name))
	}
	for _, kv := range st.context() {
		in.SetVar("EVENT::context("+kv[0]+")", tcl.Str(kv[1]))
	}
}

func stateOf(in *tcl.Interp) *runState {
	st, _ := in.Data.(*runState)
	return st
}

// maxSteps bounds the commands one run executes [M: 50 million, a
// runaway loop's guard beside the timeout].
const maxSteps = 50_000_000

// Run runs the script once with args (a CLI script's tmsh::argv after its
// name). A CLI script's body runs first (defining its procedures), then
// script::init when it has one, then script::run; an iCall script's body
// runs as written.
func (s *Script) Run(ctx context.Context, env Env, args []string) error {
	if env.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, env.Timeout)
		defer cancel()
	}
	in := tcl.NewInterp(commands())
	in.NamespaceVars = true
	st := &runState{ctx: ctx, env: env, ev: env.Event}
	in.Data = st
	in.Stdout = env.Out
	deadline, _ := ctx.Deadline()
	in.SetBudget(maxSteps, deadline)
	if env.Timeout > 0 {
		in.SleepBudget = env.Timeout
	} else {
		in.SleepBudget = time.Hour
	}
	argv0 := env.Argv0
	if argv0 == "" {
		argv0 = s.Name
	}
	argv := append([]tcl.Value{tcl.Str(argv0)}, strs(args)...)
	in.SetVar("tmsh::argv", tcl.List(argv...))
	in.SetVar("tmsh::argc", tcl.Int(int64(len(argv))))
	st.setEventVars(in)
	if _, err := in.Eval(s.body); err != nil && !tcl.IsReturn(err) {
		return s.runError(err)
	}
	if s.Kind != CLI {
		return nil
	}
	for _, entry := range []string{"script::init", "script::run"} {
		p := in.Proc(entry)
		if p == nil {
			if entry == "script::run" {
				return &RunError{Script: s.Name, Msg: "the script has no script::run procedure"}
			}
			continue
		}
		if _, err := in.CallProc(p, []tcl.Value{tcl.Str(entry)}); err != nil && !tcl.IsReturn(err) {
			return s.runError(err)
		}
	}
	return nil
}

func (s *Script) runError(err error) error {
	var te *tcl.Error
	if errors.As(err, &te) {
		re := &RunError{Script: s.Name, Msg: te.Msg}
		if w := te.Where(); w != "" {
			f := strings.Split(w, ":")
			if len(f) >= 2 {
				fmt.Sscan(f[len(f)-2], &re.Line)
				fmt.Sscan(f[len(f)-1], &re.Col)
			}
		}
		return re
	}
	return &RunError{Script: s.Name, Msg: err.Error()}
}

func strs(ss []string) []tcl.Value {
	out := make([]tcl.Value, len(ss))
	for i, s := range ss {
		out[i] = tcl.Str(s)
	}
	return out
}
