package tcl

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// CmdFunc implements a command. args[0] is the command name. args is only
// valid during the call: a command that keeps arguments must copy them.
// args must not be written to: when every word of a command is a literal,
// it is the compiled command's own slice, shared by all interpreters
// running the script, which saves copying the words on every run.
type CmdFunc func(in *Interp, args []Value) (Value, error)

// Command is a registered command. Compile, when set, lets the command
// precompile its literal arguments (script bodies, expressions) at load time.
type Command struct {
	Name    string
	Fn      CmdFunc
	Compile func(c *Compiler) error
	// native marks the core commands that have compiled plans (plan.go);
	// a host replacing them with Register gets a Command without it.
	native nativeKind
}

type nativeKind uint8

const (
	nativeNone nativeKind = iota
	nativeIf
	nativeSwitch
)

// Commands is a command table shared by many interpreters, so that creating
// an interpreter per connection costs no map copies. It must not be changed
// once interpreters use it.
type Commands struct {
	m map[string]*Command
	// Lenient accepts the forms BIG-IP's iRule compiler accepts and tclsh
	// refuses: a braced word directly followed by an open brace
	// (`if {$x}{ ... }`) ends there and the brace starts the next word.
	// Set it before any script is compiled against the table.
	Lenient bool
}

// NewCommands returns a table holding the core Tcl commands.
func NewCommands() *Commands {
	t := &Commands{m: map[string]*Command{}}
	registerCore(t)
	return t
}

// Register adds or replaces a command.
func (t *Commands) Register(name string, fn CmdFunc) *Command {
	c := &Command{Name: name, Fn: fn}
	t.m[name] = c
	return c
}

// Remove deletes a command, for hosts that forbid some core commands.
func (t *Commands) Remove(name string) { delete(t.m, name) }

// Names lists the registered commands in order.
func (t *Commands) Names() []string {
	out := make([]string, 0, len(t.m))
	for k := range t.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (t *Commands) lookup(name string) *Command {
	if c, ok := t.m[name]; ok {
		return c
	}
	if strings.HasPrefix(name, "::") {
		return t.m[name[2:]]
	}
	return nil
}

// Lookup finds a command by name.
func (t *Commands) Lookup(name string) *Command { return t.lookup(name) }

// Statics stores the variables named static::*, which iRules share across
// all connections; the host decides how they are synchronised.
type Statics interface {
	Get(name string) (Value, bool)
	Set(name string, v Value) error
}

// Error is a Tcl error raised while running a script.
type Error struct {
	Msg       string
	ErrorCode string
	Src       *Source
	Off       int
	Cmd       string
	// Stack is the Go stack of a panic that Eval turned into this error
	// (empty otherwise), for the host's log.
	Stack  string
	placed bool
}

func (e *Error) Error() string { return e.Msg }

// Where returns "name:line:col" for the command that raised the error, or
// "" when it is unknown.
func (e *Error) Where() string {
	if !e.placed || e.Src == nil {
		return ""
	}
	l, c := e.Src.Pos(e.Off)
	if e.Src.Name != "" {
		return fmt.Sprintf("%s:%d:%d", e.Src.Name, l, c)
	}
	return fmt.Sprintf("%d:%d", l, c)
}

func errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Errorf builds a Tcl error for command implementations outside the package.
func Errorf(format string, args ...any) error { return errorf(format, args...) }

// q quotes a value the way Tcl's messages do: plain double quotes.
func q(s string) string { return "\"" + s + "\"" }

// ctrl carries the non-error completion codes: return, break, continue.
type ctrl struct {
	code    int // 2 return, 3 break, 4 continue
	retCode int // for return: the -code given
	// carried is set on a return raised inside a command substitution
	// ([return v] as a word): the command that held the word never ran,
	// so the value travels here rather than as a command's result.
	carried bool
	val     Value
}

// ctrlValue is the result that goes with a completion: the value a
// substituted return carries, else v.
func ctrlValue(v Value, err error) Value {
	if c, ok := err.(*ctrl); ok && c.carried {
		return c.val
	}
	return v
}

func (c *ctrl) Error() string {
	switch c.code {
	case 3:
		return `invoked "break" outside of a loop`
	case 4:
		return `invoked "continue" outside of a loop`
	}
	return "return"
}

var (
	errBreak    = &ctrl{code: 3}
	errContinue = &ctrl{code: 4}
	errReturn   = &ctrl{code: 2}
)

// IsReturn reports whether err is the return signal; hosts running an
// event body treat it as normal completion.
func IsReturn(err error) bool {
	var c *ctrl
	return errors.As(err, &c) && c.code == 2
}

// ErrBudget is the error raised when an event exceeds its step budget or
// deadline.
var ErrBudget = errors.New("rule exceeded its execution budget")

type variable struct {
	val    Value
	arr    map[string]Value
	isArr  bool
	exists bool
	link   *variable
}

type frame struct {
	vars   map[string]*variable
	parent *frame
	level  int
}

// Proc is a compiled procedure.
type Proc struct {
	Name     string
	params   []procParam
	variadic bool
	body     *Script
}

type procParam struct {
	name   string
	def    Value
	hasDef bool
}

// Interp runs compiled scripts. It is not safe for concurrent use; the
// dataplane uses one per connection.
type Interp struct {
	cmds     *Commands
	global   *frame
	frame    *frame
	stack    []Value
	procs    map[string]*Proc
	steps    int
	maxSteps int
	// The deadline is dlBase+dlOff when dlSet: kept as a base and an
	// offset so that arming it per event costs no time.Time arithmetic.
	dlBase time.Time
	dlOff  time.Duration
	dlSet  bool
	depth  int
	// Statics, when set, holds static:: variables.
	Statics Statics
	// Stdout receives puts output; nil discards it.
	Stdout io.Writer
	// NamespaceVars makes qualified names (tmsh::argv, EVENT::context)
	// global from every procedure, as Tcl's namespace variables are:
	// tmsh scripts read them in their procs without a global command.
	// iRules leave it off.
	NamespaceVars bool
	// Data is for the host (the iRules layer keeps its connection here).
	Data any
	// MaxDepth bounds nesting of evaluation (procs, eval, substitutions).
	MaxDepth int
	// Check, when set, is asked about command names that are not
	// registered when a script is compiled; returning an error refuses it.
	Check func(name string, src *Source, off int) error
	// SleepBudget bounds the total time "after" may sleep per budget reset.
	SleepBudget time.Duration
	slept       time.Duration
	seed        uint64
	// recent holds the strings StrBytes made last, newest at
	// recentNext-1.
	recent     [recentStrings]string
	recentNext int
}

// NewInterp makes an interpreter over a shared command table.
func NewInterp(cmds *Commands) *Interp {
	g := &frame{vars: map[string]*variable{}}
	return &Interp{cmds: cmds, global: g, frame: g, stack: make([]Value, 0, 64), MaxDepth: 200, seed: 0x2545F4914F6CDD1D, SleepBudget: time.Second}
}

// Commands returns the interpreter's command table.
func (in *Interp) Commands() *Commands { return in.cmds }

// SetBudget arms the step counter and deadline for the next evaluation;
// zero values mean unlimited.
func (in *Interp) SetBudget(steps int, deadline time.Time) {
	in.SetBudgetAfter(steps, deadline, 0)
	in.dlSet = !deadline.IsZero()
}

// SetBudgetAfter is SetBudget with the deadline base+after, base being
// a time with a monotonic reading. Why: a host arming the budget for
// every event from a fixed base spares the time.Time sum.
func (in *Interp) SetBudgetAfter(steps int, base time.Time, after time.Duration) {
	in.steps = 0
	in.maxSteps = steps
	in.dlBase, in.dlOff, in.dlSet = base, after, true
	in.slept = 0
}

// Suspend waits d in the middle of an evaluation for a host whose
// evaluation has a goroutine of its own (the iRule `after ms` suspending
// its event): the time waited moves the deadline, which bounds work, not
// waiting, and does not count against SleepBudget.
func (in *Interp) Suspend(d time.Duration) {
	if d <= 0 {
		return
	}
	time.Sleep(d)
	in.Extend(d)
}

// Extend moves the deadline d later: a host's command waited d on the
// network (a sideband recv, a DNS lookup) on an evaluation that waits
// alone, which the deadline, a bound on work, should not count.
func (in *Interp) Extend(d time.Duration) {
	if d > 0 {
		in.dlOff += d
	}
}

// pastDeadline reports whether the deadline, if any, is d or less away.
func (in *Interp) pastDeadline(d time.Duration) bool {
	return in.dlSet && time.Since(in.dlBase)+d > in.dlOff
}

// Remaining is the time left before the deadline; ok is false when the
// evaluation has none. Why: a command that waits on the network (a DNS
// lookup) waits no longer than the event may run.
func (in *Interp) Remaining() (d time.Duration, ok bool) {
	if !in.dlSet {
		return 0, false
	}
	return in.dlOff - time.Since(in.dlBase), true
}

// Steps reports how many commands ran since the budget was set.
func (in *Interp) Steps() int { return in.steps }

// ResetVars forgets every global variable, so that a pooled interpreter can
// serve a new connection.
func (in *Interp) ResetVars() {
	clear(in.global.vars)
	in.frame = in.global
	in.stack = in.stack[:0]
	in.depth = 0
}

// Compile compiles a script against this interpreter's commands.
func (in *Interp) Compile(name, text string) (*Script, error) {
	c := &compiler{cmds: in.cmds, check: in.Check}
	return c.compileRange(&Source{Name: name, Text: text}, 0, len(text))
}

// CompileWith compiles a script against a command table without an
// interpreter (rules are compiled once, then run by many interpreters).
func CompileWith(cmds *Commands, check func(string, *Source, int) error, name, text string) (*Script, error) {
	c := &compiler{cmds: cmds, check: check}
	return c.compileRange(&Source{Name: name, Text: text}, 0, len(text))
}

// CompileContext is CompileWith with a host value that command Compile
// hooks can read (the iRules layer collects object references with it).
func CompileContext(cmds *Commands, check func(string, *Source, int) error, ctx any, name, text string) (*Script, error) {
	c := &compiler{cmds: cmds, check: check, ctx: ctx}
	return c.compileRange(&Source{Name: name, Text: text}, 0, len(text))
}

// Eval runs a compiled script. A panic in a command's Go code (a bug of
// the interpreter's, never the script's doing) ends the script with an
// Error that says so and carries the stack, and leaves the interpreter
// at the global level. Why: the host runs one interpreter per connection
// in a daemon that carries every other connection too; a bug found by
// one rule must cost that connection, not all of them.
func (in *Interp) Eval(s *Script) (v Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			in.frame, in.stack, in.depth = in.global, in.stack[:0], 0
			v, err = Empty, &Error{Msg: fmt.Sprintf("internal error: %v", r), Stack: string(debug.Stack())}
		}
	}()
	return in.evalScript(s)
}

// EvalString compiles and runs text; for tests and tools, not hot paths.
func (in *Interp) EvalString(text string) (Value, error) {
	s, err := in.Compile("", text)
	if err != nil {
		return Empty, err
	}
	v, err := in.evalScript(s)
	if IsReturn(err) {
		return ctrlValue(v, err), nil
	}
	return v, err
}

// EvalValue runs a value as a script, using its compiled form when it has
// one and compiling it otherwise.
func (in *Interp) EvalValue(v Value) (Value, error) {
	if v.kind == kScript {
		return in.evalScript(v.rep.(*Script))
	}
	s, err := in.Compile("", v.String())
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return Empty, errorf("%s", se.Msg)
		}
		return Empty, err
	}
	return in.evalScript(s)
}

func (in *Interp) evalScript(s *Script) (Value, error) {
	in.depth++
	if in.depth > in.MaxDepth {
		in.depth--
		return Empty, errorf("too many nested evaluations (infinite loop?)")
	}
	res := Empty
	var err error
	for _, c := range s.cmds {
		res, err = in.evalCmd(c)
		if err != nil {
			break
		}
	}
	in.depth--
	return res, err
}

func (in *Interp) tick() error {
	in.steps++
	if in.maxSteps > 0 && in.steps > in.maxSteps {
		return ErrBudget
	}
	if in.steps&255 == 0 && in.pastDeadline(0) {
		return ErrBudget
	}
	return nil
}

func (in *Interp) evalCmd(c *command) (Value, error) {
	if err := in.tick(); err != nil {
		return Empty, err
	}
	if c.plan != nil {
		res, err := c.plan.run(in, c)
		return res, in.place(err, c)
	}
	if c.lits != nil && c.fn != nil {
		res, err := c.fn.Fn(in, c.lits)
		return res, in.place(err, c)
	}
	base := len(in.stack)
	if c.lits != nil {
		in.stack = append(in.stack, c.lits...)
	} else if err := in.pushWords(c, base); err != nil {
		return Empty, err
	}
	top := len(in.stack)
	if top == base {
		return Empty, nil
	}
	args := in.stack[base:top:top]
	fn := c.fn
	if fn == nil || c.expand {
		name := args[0].String()
		fn = in.cmds.lookup(name)
		if fn == nil {
			if p := in.procs[strings.TrimPrefix(name, "::")]; p != nil {
				res, err := in.CallProc(p, args)
				in.stack = in.stack[:base]
				return res, in.place(err, c)
			}
			in.stack = in.stack[:base]
			return Empty, in.place(errorf("invalid command name %s", q(name)), c)
		}
	}
	res, err := fn.Fn(in, args)
	clear(in.stack[base:top])
	in.stack = in.stack[:base]
	if err != nil {
		return res, in.place(err, c)
	}
	return res, nil
}

// pushWords evaluates a command's words onto the stack, expanding {*}
// words; on error the stack is back at base.
func (in *Interp) pushWords(c *command, base int) error {
	for i := range c.words {
		w := &c.words[i]
		if w.kind == wLit && !w.expand {
			in.stack = append(in.stack, w.lit)
			continue
		}
		v, err := in.evalWord(w)
		if err != nil {
			in.stack = in.stack[:base]
			return in.place(err, c)
		}
		if w.expand {
			elems, err := AsList(v)
			if err != nil {
				in.stack = in.stack[:base]
				return err
			}
			in.stack = append(in.stack, elems...)
			continue
		}
		in.stack = append(in.stack, v)
	}
	return nil
}

// place records the innermost command that raised an error.
func (in *Interp) place(err error, c *command) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok && !e.placed {
		e.placed = true
		e.Src = c.src
		e.Off = c.off
		e.Cmd = c.src.Text[c.off:c.end]
	}
	return err
}

func (in *Interp) evalWord(w *word) (Value, error) {
	switch w.kind {
	case wLit:
		return w.lit, nil
	case wVar:
		return in.readVarWord(w)
	case wCmd:
		v, err := in.evalScript(w.script)
		if c, ok := err.(*ctrl); ok && c.code == 2 && !c.carried {
			// A return inside [ ] returns from the enclosing procedure
			// (or ends the script) with its value, as in Tcl.
			return Empty, &ctrl{code: 2, retCode: c.retCode, carried: true, val: v}
		}
		return v, err
	}
	var b strings.Builder
	for i := range w.parts {
		v, err := in.evalWord(&w.parts[i])
		if err != nil {
			return Empty, err
		}
		b.WriteString(v.String())
	}
	return Str(b.String()), nil
}

func (in *Interp) readVarWord(w *word) (Value, error) {
	if w.index == nil {
		if w.static && in.Statics != nil {
			if v, ok := in.Statics.Get(strings.TrimPrefix(w.name, "::")); ok {
				return v, nil
			}
			return Empty, errorf("can't read %s: no such variable", q(w.name))
		}
		v := in.findVar(w.name)
		if v == nil || !v.exists {
			return Empty, errorf("can't read %s: no such variable", q(w.name))
		}
		if v.isArr {
			return Empty, errorf("can't read %s: variable is array", q(w.name))
		}
		return v.val, nil
	}
	idx, err := in.evalWord(w.index)
	if err != nil {
		return Empty, err
	}
	if w.static && in.Statics != nil {
		// A static array's elements are kept under their full names
		// (static::a(k)), as array set and set store them.
		return in.GetVar(w.name + "(" + idx.String() + ")")
	}
	return in.getElem(w.name, idx.String())
}

func (in *Interp) findVar(name string) *variable {
	v := in.frame.vars[name]
	if v == nil && strings.HasPrefix(name, "::") {
		v = in.global.vars[name[2:]]
	} else if v == nil && in.NamespaceVars && strings.Contains(name, "::") {
		v = in.global.vars[name]
	}
	for v != nil && v.link != nil {
		v = v.link
	}
	return v
}

func (in *Interp) getElem(name, key string) (Value, error) {
	v := in.findVar(name)
	full := name + "(" + key + ")"
	if v == nil || !v.exists {
		return Empty, errorf("can't read %s: no such variable", q(full))
	}
	if !v.isArr {
		return Empty, errorf("can't read %s: variable isn't array", q(full))
	}
	e, ok := v.arr[key]
	if !ok {
		return Empty, errorf("can't read %s: no such element in array", q(full))
	}
	return e, nil
}

// splitName splits "a(b)" into array name and key.
func splitName(name string) (string, string, bool) {
	if n := len(name); n > 0 && name[n-1] == ')' {
		if i := strings.IndexByte(name, '('); i >= 0 {
			return name[:i], name[i+1 : n-1], true
		}
	}
	return name, "", false
}

// GetVar reads a variable by name ("x", "a(k)", "static::x").
func (in *Interp) GetVar(name string) (Value, error) {
	if isStatic(name) && in.Statics != nil {
		if v, ok := in.Statics.Get(strings.TrimPrefix(name, "::")); ok {
			return v, nil
		}
		return Empty, errorf("can't read %s: no such variable", q(name))
	}
	if arr, key, ok := splitName(name); ok {
		return in.getElem(arr, key)
	}
	v := in.findVar(name)
	if v == nil || !v.exists {
		return Empty, errorf("can't read %s: no such variable", q(name))
	}
	if v.isArr {
		return Empty, errorf("can't read %s: variable is array", q(name))
	}
	return v.val, nil
}

func isStatic(name string) bool {
	return strings.HasPrefix(name, "static::") || strings.HasPrefix(name, "::static::")
}

func (in *Interp) lookupOrCreate(name string) *variable {
	v := in.frame.vars[name]
	if v == nil {
		if strings.HasPrefix(name, "::") || in.NamespaceVars && strings.Contains(name, "::") {
			gname := strings.TrimPrefix(name, "::")
			g := in.global.vars[gname]
			if g == nil {
				g = &variable{}
				in.global.vars[gname] = g
			}
			for g.link != nil {
				g = g.link
			}
			return g
		}
		v = &variable{}
		in.frame.vars[name] = v
	}
	for v.link != nil {
		v = v.link
	}
	return v
}

// SetVar assigns a variable by name and returns the stored value.
func (in *Interp) SetVar(name string, val Value) (Value, error) {
	if isStatic(name) && in.Statics != nil {
		return val, in.Statics.Set(strings.TrimPrefix(name, "::"), val)
	}
	if arr, key, ok := splitName(name); ok {
		v := in.lookupOrCreate(arr)
		if v.exists && !v.isArr {
			return Empty, errorf("can't set %s: variable isn't array", q(name))
		}
		if !v.isArr {
			v.isArr, v.exists = true, true
			v.arr = map[string]Value{}
		}
		v.arr[key] = val
		return val, nil
	}
	v := in.lookupOrCreate(name)
	if v.isArr {
		return Empty, errorf("can't set %s: variable is array", q(name))
	}
	v.val, v.exists = val, true
	return val, nil
}

// VarExists tells whether a variable or array element is set.
func (in *Interp) VarExists(name string) bool {
	if isStatic(name) && in.Statics != nil {
		_, ok := in.Statics.Get(strings.TrimPrefix(name, "::"))
		return ok
	}
	if arr, key, ok := splitName(name); ok {
		v := in.findVar(arr)
		if v == nil || !v.exists || !v.isArr {
			return false
		}
		_, ok := v.arr[key]
		return ok
	}
	v := in.findVar(name)
	return v != nil && v.exists
}

// UnsetVar removes a variable or element.
func (in *Interp) UnsetVar(name string) error {
	if arr, key, ok := splitName(name); ok {
		v := in.findVar(arr)
		if v == nil || !v.exists {
			return errorf("can't unset %s: no such variable", q(name))
		}
		if !v.isArr {
			return errorf("can't unset %s: variable isn't array", q(name))
		}
		if _, ok := v.arr[key]; !ok {
			return errorf("can't unset %s: no such element in array", q(name))
		}
		delete(v.arr, key)
		return nil
	}
	v := in.findVar(name)
	if v == nil || !v.exists {
		return errorf("can't unset %s: no such variable", q(name))
	}
	v.exists, v.isArr, v.arr, v.val = false, false, nil, Empty
	if in.frame.vars[name] != nil && in.frame.vars[name].link == nil {
		delete(in.frame.vars, name)
	}
	return nil
}

// Proc finds a procedure the scripts run so far defined, nil when none
// has that name: a host calls entry points a script may or may not have
// (a tmsh script's script::init).
func (in *Interp) Proc(name string) *Proc { return in.procs[strings.TrimPrefix(name, "::")] }

// DefineProc compiles and registers a procedure in this interpreter.
func (in *Interp) DefineProc(name string, params Value, body Value) (*Proc, error) {
	p, err := NewProc(in.cmds, in.Check, name, params, body)
	if err != nil {
		return nil, err
	}
	if in.procs == nil {
		in.procs = map[string]*Proc{}
	}
	in.procs[strings.TrimPrefix(name, "::")] = p
	return p, nil
}

// NewProc builds a procedure without registering it, for hosts that keep
// their own procedure tables (iRules' call).
func NewProc(cmds *Commands, check func(string, *Source, int) error, name string, params Value, body Value) (*Proc, error) {
	plist, err := AsList(params)
	if err != nil {
		return nil, err
	}
	p := &Proc{Name: name}
	for i, pv := range plist {
		parts, err := AsList(pv)
		if err != nil {
			return nil, err
		}
		switch len(parts) {
		case 1:
			p.params = append(p.params, procParam{name: parts[0].String()})
		case 2:
			p.params = append(p.params, procParam{name: parts[0].String(), def: parts[1], hasDef: true})
		default:
			if len(parts) == 0 {
				return nil, errorf("argument with no name")
			}
			return nil, errorf("too many fields in argument specifier %s", q(pv.String()))
		}
		if i == len(plist)-1 && p.params[i].name == "args" && !p.params[i].hasDef {
			p.variadic = true
		}
	}
	if body.kind == kScript {
		p.body = body.rep.(*Script)
	} else {
		c := &compiler{cmds: cmds, check: check}
		txt := body.String()
		p.body, err = c.compileRange(&Source{Name: name, Text: txt}, 0, len(txt))
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Proc) usage() string {
	var b strings.Builder
	b.WriteString(p.Name)
	for i, a := range p.params {
		b.WriteByte(' ')
		switch {
		case p.variadic && i == len(p.params)-1:
			b.WriteString("?arg ...?")
		case a.hasDef:
			b.WriteString("?" + a.name + "?")
		default:
			b.WriteString(a.name)
		}
	}
	return b.String()
}

// CallProc runs a procedure in a new variable frame; args[0] is its name.
func (in *Interp) CallProc(p *Proc, args []Value) (Value, error) {
	f := &frame{vars: make(map[string]*variable, len(p.params)), parent: in.frame, level: in.frame.level + 1}
	given := args[1:]
	for i, prm := range p.params {
		if p.variadic && i == len(p.params)-1 {
			rest := make([]Value, 0, len(given)-min(i, len(given)))
			if i < len(given) {
				rest = append(rest, given[i:]...)
			}
			f.vars["args"] = &variable{val: List(rest...), exists: true}
			given = given[:min(i, len(given))]
			break
		}
		switch {
		case i < len(given):
			f.vars[prm.name] = &variable{val: given[i], exists: true}
		case prm.hasDef:
			f.vars[prm.name] = &variable{val: prm.def, exists: true}
		default:
			return Empty, errorf("wrong # args: should be %s", q(p.usage()))
		}
	}
	if !p.variadic && len(given) > len(p.params) {
		return Empty, errorf("wrong # args: should be %s", q(p.usage()))
	}
	saved := in.frame
	in.frame = f
	res, err := in.evalScript(p.body)
	in.frame = saved
	if err != nil {
		res = ctrlValue(res, err)
		if c, ok := err.(*ctrl); ok {
			switch c.code {
			case 2:
				switch c.retCode {
				case 0:
					return res, nil
				case 1:
					return Empty, errorf("%s", res.String())
				case 3:
					return res, errBreak
				case 4:
					return res, errContinue
				}
				return res, nil
			case 3:
				return Empty, errorf(`invoked "break" outside of a loop`)
			case 4:
				return Empty, errorf(`invoked "continue" outside of a loop`)
			}
		}
		return res, err
	}
	return res, nil
}

func wrongArgs(usage string) error {
	return errorf("wrong # args: should be %s", q(usage))
}

// WrongArgs builds Tcl's usage error for command implementations.
func WrongArgs(usage string) error { return wrongArgs(usage) }
