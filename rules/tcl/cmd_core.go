package tcl

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

func registerCore(t *Commands) {
	t.Register("set", cmdSet)
	t.Register("unset", cmdUnset)
	t.Register("incr", cmdIncr)
	t.Register("append", cmdAppend)
	t.Register("lappend", cmdLappend)
	t.Register("if", cmdIf).native = nativeIf
	t.Register("while", cmdWhile)
	t.Register("for", cmdFor)
	t.Register("foreach", cmdForeach)
	t.Register("break", func(in *Interp, args []Value) (Value, error) {
		if len(args) != 1 {
			return Empty, wrongArgs("break")
		}
		return Empty, errBreak
	})
	t.Register("continue", func(in *Interp, args []Value) (Value, error) {
		if len(args) != 1 {
			return Empty, wrongArgs("continue")
		}
		return Empty, errContinue
	})
	t.Register("return", cmdReturn)
	t.Register("catch", cmdCatch)
	t.Register("error", cmdError)
	t.Register("eval", cmdEval)
	t.Register("subst", cmdSubst)
	t.Register("expr", cmdExpr)
	t.Register("proc", cmdProc)
	t.Register("global", cmdGlobal)
	t.Register("upvar", cmdUpvar)
	t.Register("uplevel", cmdUplevel)
	t.Register("puts", cmdPuts)
	t.Register("info", cmdInfo)
	t.Register("array", cmdArray)
	t.Register("after", cmdAfter)
	t.Register("clock", cmdClock)
	registerLists(t)
	registerStrings(t)
	registerFormat(t)
	registerBinary(t)
	registerRegexp(t)
	t.Register("switch", cmdSwitch).native = nativeSwitch
}

func cmdSet(in *Interp, args []Value) (Value, error) {
	switch len(args) {
	case 2:
		return in.GetVar(args[1].String())
	case 3:
		return in.SetVar(args[1].String(), args[2])
	}
	return Empty, wrongArgs("set varName ?newValue?")
}

func cmdUnset(in *Interp, args []Value) (Value, error) {
	complain := true
	i := 1
	for ; i < len(args); i++ {
		s := args[i].String()
		if s == "-nocomplain" {
			complain = false
			continue
		}
		if s == "--" {
			i++
		}
		break
	}
	for ; i < len(args); i++ {
		if err := in.UnsetVar(args[i].String()); err != nil && complain {
			return Empty, err
		}
	}
	return Empty, nil
}

func cmdIncr(in *Interp, args []Value) (Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return Empty, wrongArgs("incr varName ?increment?")
	}
	name := args[1].String()
	cur := Int(0)
	if in.VarExists(name) {
		v, err := in.GetVar(name)
		if err != nil {
			return Empty, err
		}
		cur = v
	}
	n, ok := asNumber(cur)
	if !ok || n.kind == kDouble {
		return Empty, errorf("expected integer but got %s", q(cur.String()))
	}
	d := number{i: 1, kind: kInt}
	if len(args) == 3 {
		d, ok = asNumber(args[2])
		if !ok || d.kind == kDouble {
			return Empty, errorf("expected integer but got %s", q(args[2].String()))
		}
	}
	var r Value
	if n.kind == kInt && d.kind == kInt {
		s := n.i + d.i
		if (s > n.i) == (d.i > 0) {
			r = Int(s)
		}
	}
	if r.kind == kStr {
		var err error
		r, err = intBinary(opAdd, n, d)
		if err != nil {
			return Empty, err
		}
	}
	return in.SetVar(name, r)
}

func cmdAppend(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("append varName ?value ...?")
	}
	name := args[1].String()
	var b strings.Builder
	if in.VarExists(name) {
		v, err := in.GetVar(name)
		if err != nil {
			return Empty, err
		}
		b.WriteString(v.String())
	} else if len(args) == 2 {
		return in.GetVar(name)
	}
	for _, a := range args[2:] {
		b.WriteString(a.String())
	}
	return in.SetVar(name, Str(b.String()))
}

func cmdLappend(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("lappend varName ?value ...?")
	}
	name := args[1].String()
	var elems []Value
	if in.VarExists(name) {
		v, err := in.GetVar(name)
		if err != nil {
			return Empty, err
		}
		l, err := AsList(v)
		if err != nil {
			return Empty, err
		}
		elems = make([]Value, len(l), len(l)+len(args)-2)
		copy(elems, l)
	}
	elems = append(elems, args[2:]...)
	return in.SetVar(name, List(elems...))
}

func cmdIf(in *Interp, args []Value) (Value, error) {
	i := 1
	for {
		if i >= len(args) {
			return Empty, errorf("wrong # args: no expression after %s argument", q(args[i-1].String()))
		}
		ok, err := in.ExprBool(args[i])
		if err != nil {
			return Empty, err
		}
		i++
		if i < len(args) && args[i].String() == "then" {
			i++
		}
		if i >= len(args) {
			return Empty, errorf("wrong # args: no script following %s argument", q(args[i-1].String()))
		}
		if ok {
			return in.EvalValue(args[i])
		}
		i++
		if i >= len(args) {
			return Empty, nil
		}
		kw := args[i].String()
		if kw == "elseif" {
			i++
			continue
		}
		if kw == "else" {
			i++
			if i >= len(args) {
				return Empty, errorf("wrong # args: no script following \"else\" argument")
			}
		}
		if i != len(args)-1 {
			return Empty, errorf("wrong # args: extra words after \"else\" clause in \"if\" command")
		}
		return in.EvalValue(args[i])
	}
}

// loopResult is what a loop returns when its body stopped it with err:
// a return's value travels with the signal (the body's result), so a
// procedure returning from inside a loop returns that value.
func loopResult(v Value, err error) Value {
	if c, ok := err.(*ctrl); ok && c.code == 2 {
		return ctrlValue(v, err)
	}
	return Empty
}

// loopErr says whether a loop body's outcome stops the loop, and with
// what error.
func loopErr(err error) (stop bool, out error) {
	if err == nil {
		return false, nil
	}
	if c, ok := err.(*ctrl); ok {
		switch c.code {
		case 3:
			return true, nil
		case 4:
			return false, nil
		}
	}
	return true, err
}

func cmdWhile(in *Interp, args []Value) (Value, error) {
	if len(args) != 3 {
		return Empty, wrongArgs("while test command")
	}
	for {
		ok, err := in.ExprBool(args[1])
		if err != nil || !ok {
			return Empty, err
		}
		if err := in.tick(); err != nil {
			return Empty, err
		}
		v, err := in.EvalValue(args[2])
		if stop, err := loopErr(err); stop {
			return loopResult(v, err), err
		}
	}
}

func cmdFor(in *Interp, args []Value) (Value, error) {
	if len(args) != 5 {
		return Empty, wrongArgs("for start test next command")
	}
	if _, err := in.EvalValue(args[1]); err != nil {
		return Empty, err
	}
	for {
		ok, err := in.ExprBool(args[2])
		if err != nil || !ok {
			return Empty, err
		}
		if err := in.tick(); err != nil {
			return Empty, err
		}
		v, err := in.EvalValue(args[4])
		if stop, err := loopErr(err); stop {
			return loopResult(v, err), err
		}
		if v, err := in.EvalValue(args[3]); err != nil {
			if stop, err := loopErr(err); stop {
				return loopResult(v, err), err
			}
		}
	}
}

func cmdForeach(in *Interp, args []Value) (Value, error) {
	if len(args) < 4 || len(args)%2 != 0 {
		return Empty, wrongArgs("foreach varList list ?varList list ...? command")
	}
	n := (len(args) - 2) / 2
	vars := make([][]Value, n)
	lists := make([][]Value, n)
	iters := 0
	for k := 0; k < n; k++ {
		v, err := AsList(args[1+2*k])
		if err != nil {
			return Empty, err
		}
		if len(v) == 0 {
			return Empty, errorf("foreach varlist is empty")
		}
		l, err := AsList(args[2+2*k])
		if err != nil {
			return Empty, err
		}
		vars[k], lists[k] = v, l
		if c := (len(l) + len(v) - 1) / len(v); c > iters {
			iters = c
		}
	}
	body := args[len(args)-1]
	for it := 0; it < iters; it++ {
		for k := 0; k < n; k++ {
			for j, vn := range vars[k] {
				idx := it*len(vars[k]) + j
				val := Empty
				if idx < len(lists[k]) {
					val = lists[k][idx]
				}
				if _, err := in.SetVar(vn.String(), val); err != nil {
					return Empty, errorf("couldn't set loop variable: %s", q(vn.String()))
				}
			}
		}
		v, err := in.EvalValue(body)
		if stop, err := loopErr(err); stop {
			return loopResult(v, err), err
		}
	}
	return Empty, nil
}

func cmdReturn(in *Interp, args []Value) (Value, error) {
	code := 0
	i := 1
	for i+1 < len(args) {
		o := args[i].String()
		if o == "-code" {
			switch c := args[i+1].String(); c {
			case "ok":
				code = 0
			case "error":
				code = 1
			case "return":
				code = 2
			case "break":
				code = 3
			case "continue":
				code = 4
			default:
				n, err := strconv.Atoi(c)
				if err != nil {
					return Empty, errorf("bad completion code %s: must be ok, error, return, break, continue, or an integer", q(c))
				}
				code = n
			}
			i += 2
			continue
		}
		if strings.HasPrefix(o, "-") {
			i += 2
			continue
		}
		break
	}
	val := Empty
	if i < len(args) {
		val = args[i]
	}
	if code == 0 {
		return val, errReturn
	}
	return val, &ctrl{code: 2, retCode: code}
}

// Catchable reports whether catch may intercept err: Tcl errors and the
// control codes are, while a budget overrun or a host's fatal error is not.
func Catchable(err error) bool {
	switch err.(type) {
	case *Error, *ctrl:
		return true
	}
	return false
}

func cmdCatch(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 || len(args) > 4 {
		return Empty, wrongArgs("catch script ?resultVarName? ?optionVarName?")
	}
	depth := in.depth
	res, err := in.EvalValue(args[1])
	in.depth = depth
	code := 0
	msg := res
	errCode := "NONE"
	if err != nil {
		if !Catchable(err) {
			return Empty, err
		}
		switch e := err.(type) {
		case *Error:
			code = 1
			msg = Str(e.Msg)
			if e.ErrorCode != "" {
				errCode = e.ErrorCode
			}
			in.SetVar("::errorCode", Str(errCode))
		case *ctrl:
			code = e.code
			msg = ctrlValue(res, err)
		}
	}
	if len(args) >= 3 {
		if _, err := in.SetVar(args[2].String(), msg); err != nil {
			return Empty, errorf("couldn't save command result in variable")
		}
	}
	if len(args) == 4 {
		opts := []Value{Str("-code"), Int(int64(code)), Str("-level"), Int(0)}
		if code == 1 {
			opts = append(opts, Str("-errorcode"), Str(errCode))
		}
		in.SetVar(args[3].String(), List(opts...))
	}
	return Int(int64(code)), nil
}

func cmdError(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 || len(args) > 4 {
		return Empty, wrongArgs("error message ?errorInfo? ?errorCode?")
	}
	e := &Error{Msg: args[1].String()}
	if len(args) == 4 {
		e.ErrorCode = args[3].String()
	}
	return Empty, e
}

func cmdEval(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("eval arg ?arg ...?")
	}
	if len(args) == 2 {
		return in.EvalValue(args[1])
	}
	return in.EvalValue(Str(concatValues(args[1:])))
}

func cmdExpr(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("expr arg ?arg ...?")
	}
	if len(args) == 2 {
		return in.EvalExpr(args[1])
	}
	return in.EvalExpr(Str(concatValues(args[1:])))
}

func cmdSubst(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("subst ?-nobackslashes? ?-nocommands? ?-novariables? string")
	}
	noBS, noCmd, noVar := false, false, false
	for _, o := range args[1 : len(args)-1] {
		switch o.String() {
		case "-nobackslashes":
			noBS = true
		case "-nocommands":
			noCmd = true
		case "-novariables":
			noVar = true
		default:
			return Empty, errorf("bad option %s: must be -nobackslashes, -nocommands, or -novariables", q(o.String()))
		}
	}
	s := args[len(args)-1].String()
	src := &Source{Text: s}
	p := &parser{c: &compiler{cmds: in.cmds, check: in.Check}, src: src, s: s, end: len(s)}
	var b strings.Builder
	for p.pos < len(s) {
		ch := s[p.pos]
		switch {
		case ch == '\\' && !noBS:
			r, n := backslash(s[p.pos:])
			b.WriteString(r)
			p.pos += n
		case ch == '$' && !noVar:
			w, ok, err := p.parseVar(false)
			if err != nil {
				return Empty, errorf("%s", err.(*SyntaxError).Msg)
			}
			if !ok {
				b.WriteByte('$')
				p.pos++
				continue
			}
			v, err := in.evalWord(&w)
			if err != nil {
				return Empty, err
			}
			b.WriteString(v.String())
		case ch == '[' && !noCmd:
			p.pos++
			sc, err := p.parseScript(true)
			if err != nil {
				return Empty, errorf("%s", err.(*SyntaxError).Msg)
			}
			v, err := in.evalScript(sc)
			if err != nil {
				if c, ok := err.(*ctrl); ok {
					if c.code == 3 {
						return Str(b.String()), nil
					}
					if c.code == 4 {
						continue
					}
					if c.code == 2 {
						b.WriteString(ctrlValue(v, err).String())
						continue
					}
				}
				return Empty, err
			}
			b.WriteString(v.String())
		default:
			b.WriteByte(ch)
			p.pos++
		}
	}
	return Str(b.String()), nil
}

func cmdProc(in *Interp, args []Value) (Value, error) {
	if len(args) != 4 {
		return Empty, wrongArgs("proc name args body")
	}
	_, err := in.DefineProc(args[1].String(), args[2], args[3])
	return Empty, err
}

func cmdGlobal(in *Interp, args []Value) (Value, error) {
	if in.frame == in.global {
		return Empty, nil
	}
	for _, a := range args[1:] {
		name := strings.TrimPrefix(a.String(), "::")
		g := in.global.vars[name]
		if g == nil {
			g = &variable{}
			in.global.vars[name] = g
		}
		in.frame.vars[name] = &variable{link: g}
	}
	return Empty, nil
}

func cmdUpvar(in *Interp, args []Value) (Value, error) {
	rest := args[1:]
	target := in.frame.parent
	if len(rest)%2 == 1 {
		var err error
		if target, err = in.levelFrame(rest[0].String()); err != nil {
			return Empty, err
		}
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return Empty, wrongArgs("upvar ?level? otherVar localVar ?otherVar localVar ...?")
	}
	if target == nil {
		return Empty, errorf("bad level")
	}
	for i := 0; i+1 < len(rest); i += 2 {
		other := rest[i].String()
		ov := target.vars[other]
		if ov == nil {
			ov = &variable{}
			target.vars[other] = ov
		}
		for ov.link != nil {
			ov = ov.link
		}
		in.frame.vars[rest[i+1].String()] = &variable{link: ov}
	}
	return Empty, nil
}

func cmdPuts(in *Interp, args []Value) (Value, error) {
	nl := true
	a := args[1:]
	if len(a) > 0 && a[0].String() == "-nonewline" {
		nl = false
		a = a[1:]
	}
	if len(a) == 2 {
		ch := a[0].String()
		if ch != "stdout" && ch != "stderr" {
			return Empty, errorf("can not find channel named %s", q(ch))
		}
		a = a[1:]
	}
	if len(a) != 1 {
		return Empty, wrongArgs("puts ?-nonewline? ?channelId? string")
	}
	if in.Stdout != nil {
		io.WriteString(in.Stdout, a[0].String())
		if nl {
			io.WriteString(in.Stdout, "\n")
		}
	}
	return Empty, nil
}

func cmdInfo(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("info subcommand ?arg ...?")
	}
	switch args[1].String() {
	case "exists":
		if len(args) != 3 {
			return Empty, wrongArgs("info exists varName")
		}
		return Bool(in.VarExists(args[2].String())), nil
	case "commands", "procs":
		pat := "*"
		if len(args) > 2 {
			pat = args[2].String()
		}
		var names []string
		if args[1].String() == "commands" {
			for _, n := range in.cmds.Names() {
				if GlobMatch(pat, n, false) {
					names = append(names, n)
				}
			}
		}
		for n := range in.procs {
			if GlobMatch(pat, n, false) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return Str(FormatList(names...)), nil
	case "level":
		return Int(int64(in.frame.level)), nil
	case "vars", "locals", "globals":
		f := in.frame
		if args[1].String() == "globals" {
			f = in.global
		}
		var names []string
		for n, v := range f.vars {
			if v.link != nil || v.exists {
				if len(args) < 3 || GlobMatch(args[2].String(), n, false) {
					names = append(names, n)
				}
			}
		}
		sort.Strings(names)
		return Str(FormatList(names...)), nil
	case "body", "args":
		if len(args) != 3 {
			return Empty, wrongArgs("info " + args[1].String() + " procname")
		}
		p := in.procs[args[2].String()]
		if p == nil {
			return Empty, errorf("%s isn't a procedure", q(args[2].String()))
		}
		if args[1].String() == "body" {
			return Str(p.body.Text()), nil
		}
		names := make([]string, len(p.params))
		for i, a := range p.params {
			names[i] = a.name
		}
		return Str(FormatList(names...)), nil
	}
	return Empty, errorf("unknown or ambiguous subcommand %s: must be args, body, commands, exists, globals, level, locals, procs, or vars", q(args[1].String()))
}

func cmdArray(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("array subcommand ?arg ...?")
	}
	name := args[2].String()
	v := in.findVar(name)
	isArr := v != nil && v.exists && v.isArr
	keys := func(pat string) []string {
		if !isArr {
			return nil
		}
		out := make([]string, 0, len(v.arr))
		for k := range v.arr {
			if pat == "" || GlobMatch(pat, k, false) {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	pat := ""
	if len(args) > 3 {
		pat = args[len(args)-1].String()
	}
	switch args[1].String() {
	case "exists":
		return Bool(isArr), nil
	case "size":
		if !isArr {
			return Int(0), nil
		}
		return Int(int64(len(v.arr))), nil
	case "names":
		return Str(FormatList(keys(pat)...)), nil
	case "get":
		var out []Value
		for _, k := range keys(pat) {
			out = append(out, Str(k), v.arr[k])
		}
		return List(out...), nil
	case "set":
		if len(args) != 4 {
			return Empty, wrongArgs("array set arrayName list")
		}
		l, err := AsList(args[3])
		if err != nil {
			return Empty, err
		}
		if len(l)%2 != 0 {
			return Empty, errorf("list must have an even number of elements")
		}
		if v != nil && v.exists && !v.isArr {
			return Empty, errorf("can't set %s: variable isn't array", q(name+"("+l[0].String()+")"))
		}
		if len(l) == 0 && !isArr {
			nv := in.lookupOrCreate(name)
			nv.isArr, nv.exists, nv.arr = true, true, map[string]Value{}
		}
		for i := 0; i < len(l); i += 2 {
			if _, err := in.SetVar(name+"("+l[i].String()+")", l[i+1]); err != nil {
				return Empty, err
			}
		}
		return Empty, nil
	case "unset":
		if !isArr {
			return Empty, nil
		}
		if len(args) == 3 {
			return Empty, in.UnsetVar(name)
		}
		for _, k := range keys(pat) {
			delete(v.arr, k)
		}
		return Empty, nil
	}
	return Empty, errorf("unknown or ambiguous subcommand %s: must be exists, get, names, set, size, or unset", q(args[1].String()))
}

func cmdAfter(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("after option ?arg ...?")
	}
	switch args[1].String() {
	case "cancel", "info", "idle":
		return Empty, nil
	}
	ms, err := asInt(args[1])
	if err != nil {
		return Empty, errorf("bad argument %s: must be cancel, idle, info, or an integer", q(args[1].String()))
	}
	d := time.Duration(ms) * time.Millisecond
	if d > 0 {
		if in.slept+d > in.SleepBudget || in.pastDeadline(d) {
			return Empty, ErrBudget
		}
		in.slept += d
		time.Sleep(d)
	}
	if len(args) > 2 {
		var err error
		if len(args) == 3 {
			_, err = in.EvalValue(args[2])
		} else {
			_, err = in.EvalValue(Str(concatValues(args[2:])))
		}
		if err != nil {
			return Empty, err
		}
		return Str("after#0"), nil
	}
	return Empty, nil
}

// Now is the clock used by the clock command; hosts and tests may replace it.
var Now = time.Now

func cmdClock(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("clock subcommand ?arg ...?")
	}
	now := Now()
	switch args[1].String() {
	case "seconds":
		return Int(now.Unix()), nil
	case "milliseconds":
		return Int(now.UnixMilli()), nil
	case "microseconds":
		return Int(now.UnixMicro()), nil
	case "clicks":
		if len(args) > 2 && args[2].String() == "-milliseconds" {
			return Int(now.UnixMilli()), nil
		}
		return Int(now.UnixMicro()), nil
	case "format":
		if len(args) < 3 {
			return Empty, wrongArgs("clock format clockval ?-format string? ?-gmt boolean?")
		}
		secs, err := args[2].Int64()
		if err != nil {
			return Empty, errorf("expected integer but got %s", q(args[2].String()))
		}
		format := "%a %b %d %H:%M:%S %Z %Y"
		loc := time.Local
		gmt := false
		for i := 3; i+1 < len(args); i += 2 {
			switch args[i].String() {
			case "-format":
				format = args[i+1].String()
			case "-gmt":
				b, err := args[i+1].Truth()
				if err != nil {
					return Empty, err
				}
				if b {
					loc, gmt = time.UTC, true
				}
			case "-timezone":
				if tz := args[i+1].String(); tz == ":UTC" || tz == "UTC" || tz == ":GMT" {
					loc, gmt = time.UTC, true
				}
			default:
				return Empty, errorf("bad option %s: must be -format, -gmt, -locale, or -timezone", q(args[i].String()))
			}
		}
		return Str(strftime(time.Unix(secs, 0).In(loc), format, gmt)), nil
	}
	return Empty, errorf("unknown or ambiguous subcommand %s: must be clicks, format, microseconds, milliseconds, or seconds", q(args[1].String()))
}

func strftime(t time.Time, f string, gmt bool) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'k':
			fmt.Fprintf(&b, "%2d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'l':
			fmt.Fprintf(&b, "%2d", (t.Hour()+11)%12+1)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 's':
			fmt.Fprintf(&b, "%d", t.Unix())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'Z':
			if gmt {
				b.WriteString("GMT")
			} else {
				b.WriteString(t.Format("MST"))
			}
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'u':
			w := int(t.Weekday())
			if w == 0 {
				w = 7
			}
			fmt.Fprintf(&b, "%d", w)
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case 'D':
			b.WriteString(strftime(t, "%m/%d/%Y", gmt))
		case 'T':
			b.WriteString(strftime(t, "%H:%M:%S", gmt))
		case 'R':
			b.WriteString(strftime(t, "%H:%M", gmt))
		case 'F':
			b.WriteString(strftime(t, "%Y-%m-%d", gmt))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// concatValues implements concat's joining: trim each argument and join
// the non-empty ones with one space.
func concatValues(vs []Value) string {
	var b strings.Builder
	for _, v := range vs {
		s := trimSpace(v.String())
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}

var _ = errors.New

// levelFrame is the frame a level word names, as upvar and uplevel read
// it: #N counts from the global frame, N climbs N frames from the
// current one.
func (in *Interp) levelFrame(lv string) (*frame, error) {
	if strings.HasPrefix(lv, "#") {
		n, err := strconv.Atoi(lv[1:])
		if err != nil || n < 0 {
			return nil, errorf("bad level %s", q(lv))
		}
		target := in.frame
		for target != nil && target.level > n {
			target = target.parent
		}
		if target == nil || target.level != n {
			return nil, errorf("bad level %s", q(lv))
		}
		return target, nil
	}
	n, err := strconv.Atoi(lv)
	if err != nil || n < 0 {
		return nil, errorf("bad level %s", q(lv))
	}
	target := in.frame
	for ; n > 0 && target != nil; n-- {
		target = target.parent
	}
	if target == nil {
		return nil, errorf("bad level %s", q(lv))
	}
	return target, nil
}

// isLevel says whether a word is a level (#N or a number), which makes
// it uplevel's optional first argument.
func isLevel(s string) bool {
	s = strings.TrimPrefix(s, "#")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cmdUplevel is uplevel ?level? arg ?arg ...?: the script runs in the
// variable frame of a caller (1 by default), which procedures that work
// on their caller's variables use (BIG-IP keeps uplevel in iRules).
func cmdUplevel(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("uplevel ?level? command ?arg ...?")
	}
	rest := args[1:]
	lv := "1"
	if len(rest) > 1 && isLevel(rest[0].String()) {
		lv, rest = rest[0].String(), rest[1:]
	}
	target, err := in.levelFrame(lv)
	if err != nil {
		return Empty, err
	}
	script := rest[0]
	if len(rest) > 1 {
		script = Str(concatValues(rest))
	}
	saved := in.frame
	in.frame = target
	v, err := in.EvalValue(script)
	in.frame = saved
	return v, err
}
