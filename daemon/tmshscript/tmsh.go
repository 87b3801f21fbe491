package tmshscript

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/rules/tcl"
)

// registerTmsh adds F5's tmsh:: commands. Each takes the words of a tmsh
// command after its verb, joined by spaces as F5's do (a braced block is
// written `\{ ... \}` or inside one quoted word, as F5's examples write
// it), and runs that command through the session.
func registerTmsh(t *tcl.Commands) {
	// Commands whose output, if any, is the shell's (warnings): passed to
	// the script's output as tmsh would print it.
	for _, verb := range []string{"create", "modify", "delete", "save", "load", "run", "reset-stats", "generate", "publish"} {
		name := "tmsh::" + strings.ReplaceAll(verb, "-", "_")
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) < 2 {
				return tcl.Empty, tcl.WrongArgs(name + " arg ?arg ...?")
			}
			st := stateOf(in)
			var out bytes.Buffer
			err := st.exec(verb+" "+joinArgs(args[1:]), &out)
			if out.Len() > 0 && st.env.Out != nil {
				st.env.Out.Write(out.Bytes())
			}
			return tcl.Empty, err
		})
	}
	// list and show return what they print [M: F5's print it too; a
	// script that wants it printed puts the result].
	for _, verb := range []string{"list", "show"} {
		name := "tmsh::" + verb
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			var out bytes.Buffer
			if err := stateOf(in).exec(verb+" "+joinArgs(args[1:]), &out); err != nil {
				return tcl.Empty, err
			}
			return tcl.Str(out.String()), nil
		})
	}
	t.Register("tmsh::cd", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("tmsh::cd folder")
		}
		return tcl.Empty, stateOf(in).exec("cd "+args[1].String(), nil)
	})
	t.Register("tmsh::pwd", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("tmsh::pwd")
		}
		return tcl.Str(stateOf(in).env.Shell.Folder()), nil
	})
	t.Register("tmsh::begin_transaction", txCmd("create cli transaction"))
	t.Register("tmsh::commit_transaction", txCmd("submit cli transaction"))
	t.Register("tmsh::cancel_transaction", txCmd("delete cli transaction"))
	t.Register("tmsh::display", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("tmsh::display text")
		}
		if out := stateOf(in).env.Out; out != nil {
			fmt.Fprintln(out, args[1].String())
		}
		return tcl.Empty, nil
	})
	t.Register("tmsh::log", cmdLog)
	t.Register("tmsh::get_config", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return getObjects(in, "list", args)
	})
	t.Register("tmsh::get_status", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return getObjects(in, "show", append(args, tcl.Str("field-fmt")))
	})
	t.Register("tmsh::get_field_value", cmdGetFieldValue)
	t.Register("tmsh::get_field_names", cmdGetFieldNames)
	t.Register("tmsh::get_name", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("tmsh::get_name object")
		}
		head, _, err := parseObject(args[1].String())
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Str(head[len(head)-1]), nil
	})
	t.Register("tmsh::get_type", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("tmsh::get_type object")
		}
		head, _, err := parseObject(args[1].String())
		if err != nil {
			return tcl.Empty, err
		}
		if len(head) < 2 {
			return tcl.Empty, nil // a nested object has a name only
		}
		return tcl.Str(strings.Join(head[:len(head)-1], " ")), nil
	})
	// F5 has these; openltm does not do them yet: a Tcl error, never a
	// pretended success.
	for _, name := range []string{"tmsh::stateless", "tmsh::expand_glob", "tmsh::get_field_value_list", "tmsh::clear_screen", "tmsh::get_username", "tmsh::version", "tmsh::suspend_validation", "tmsh::resume_validation"} {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("%s is not supported by openltm yet", name)
		})
	}
}

func txCmd(line string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(args[0].String())
		}
		return tcl.Empty, stateOf(in).exec(line, nil)
	}
}

// logSeverities are the words tmsh::log takes before its message [M: F5
// documents tmsh::log message; the level word is openltm's].
var logSeverities = map[string]bool{"emerg": true, "alert": true, "crit": true, "err": true, "error": true, "warning": true, "notice": true, "info": true, "debug": true}

func cmdLog(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	sev := "info"
	switch {
	case len(args) == 3 && logSeverities[args[1].String()]:
		sev = args[1].String()
		if sev == "error" {
			sev = "err"
		}
	case len(args) != 2:
		return tcl.Empty, tcl.WrongArgs("tmsh::log ?severity? message")
	}
	if log := stateOf(in).env.Log; log != nil {
		log(sev, args[len(args)-1].String())
	}
	return tcl.Empty, nil
}

// exec runs one shell command for the script; the shell's error becomes
// the Tcl error, with the command that failed.
func (st *runState) exec(line string, w *bytes.Buffer) error {
	if err := st.ctx.Err(); err != nil {
		return tcl.Errorf("script stopped (%v) before: %s", err, line)
	}
	var out bytes.Buffer
	if w == nil {
		w = &out
	}
	if err := st.env.Shell.Exec(st.ctx, line, w); err != nil {
		return tcl.Errorf("%s", strings.TrimSpace(err.Error()))
	}
	if w == &out && out.Len() > 0 && st.env.Out != nil {
		st.env.Out.Write(out.Bytes())
	}
	return nil
}

func joinArgs(args []tcl.Value) string {
	ws := make([]string, len(args))
	for i, a := range args {
		ws[i] = a.String()
	}
	return strings.Join(ws, " ")
}

// getObjects runs list or show and returns each object printed as one
// value: its text, which tmsh::get_field_value and tmsh::get_name read
// [M: F5's objects are opaque handles; here they are the text list
// prints, so puts shows the object as list would].
func getObjects(in *tcl.Interp, verb string, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(args[0].String() + " component ?name? ?options?")
	}
	var out bytes.Buffer
	if err := stateOf(in).exec(verb+" "+joinArgs(args[1:]), &out); err != nil {
		return tcl.Empty, err
	}
	f, err := grammar.Parse("", out.Bytes())
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s output could not be read as objects: %v", verb, err)
	}
	objs := make([]tcl.Value, 0, len(f.Statements))
	for _, st := range f.Statements {
		objs = append(objs, tcl.Str(st.Source))
	}
	return tcl.List(objs...), nil
}

// parseObject reads an object value: the words before its block and the
// block's lines.
func parseObject(text string) ([]string, [][]grammar.Node, error) {
	f, err := grammar.Parse("", []byte(text))
	if err != nil || len(f.Statements) != 1 {
		return nil, nil, tcl.Errorf("not a tmsh object: %q", shorten(text))
	}
	st := f.Statements[0]
	var head []string
	var lines [][]grammar.Node
	for _, it := range st.Items {
		switch n := it.(type) {
		case *grammar.Word:
			head = append(head, n.Text)
		case *grammar.Block:
			if n.Tcl {
				lines = [][]grammar.Node{{&grammar.Word{Text: "definition"}, &grammar.Word{Text: n.Raw}}}
				continue
			}
			lines = n.Lines()
		}
	}
	if len(head) == 0 {
		return nil, nil, tcl.Errorf("not a tmsh object: %q", shorten(text))
	}
	return head, lines, nil
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// cmdGetFieldValue is tmsh::get_field_value object field: a value field's
// value (several words as a list), or, for a nested block of named items
// (members, profiles), the list of those items as objects, or for a
// block of properties (source-address-translation) one object.
func cmdGetFieldValue(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("tmsh::get_field_value object field")
	}
	_, lines, err := parseObject(args[1].String())
	if err != nil {
		return tcl.Empty, err
	}
	field := args[2].String()
	for _, l := range lines {
		k, ok := l[0].(*grammar.Word)
		if !ok || k.Text != field {
			continue
		}
		rest := l[1:]
		switch {
		case len(rest) == 0:
			return tcl.Empty, nil // a flag: present, no value
		case len(rest) == 1:
			if w, ok := rest[0].(*grammar.Word); ok {
				return tcl.Str(w.Text), nil
			}
			return nested(field, rest[0].(*grammar.Block)), nil
		}
		vs := make([]tcl.Value, 0, len(rest))
		for _, n := range rest {
			switch n := n.(type) {
			case *grammar.Word:
				vs = append(vs, tcl.Str(n.Text))
			case *grammar.Block:
				vs = append(vs, tcl.Str(strings.TrimSpace(n.Raw)))
			}
		}
		return tcl.List(vs...), nil
	}
	return tcl.Empty, tcl.Errorf("field not found: %s", field)
}

// nested turns a block into the value get_field_value returns: the list
// of its named items when every line is `NAME { ... }`, else the block as
// one object named by the field.
func nested(field string, b *grammar.Block) tcl.Value {
	lines := b.Lines()
	items := make([]tcl.Value, 0, len(lines))
	for _, l := range lines {
		if len(l) != 2 {
			return tcl.Str(grammar.Quote(field) + " {" + b.Raw + "}")
		}
		w, ok1 := l[0].(*grammar.Word)
		blk, ok2 := l[1].(*grammar.Block)
		if !ok1 || !ok2 {
			return tcl.Str(grammar.Quote(field) + " {" + b.Raw + "}")
		}
		items = append(items, tcl.Str(grammar.Quote(w.Text)+" {"+blk.Raw+"}"))
	}
	return tcl.List(items...)
}

// cmdGetFieldNames is tmsh::get_field_names value|nested object: the names
// of the object's value fields, or of its nested (block) fields.
func cmdGetFieldNames(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 || (args[1].String() != "value" && args[1].String() != "nested") {
		return tcl.Empty, tcl.WrongArgs("tmsh::get_field_names value|nested object")
	}
	_, lines, err := parseObject(args[2].String())
	if err != nil {
		return tcl.Empty, err
	}
	want := args[1].String() == "nested"
	var out []tcl.Value
	for _, l := range lines {
		k, ok := l[0].(*grammar.Word)
		if !ok {
			continue
		}
		isBlock := false
		if len(l) == 2 {
			_, isBlock = l[1].(*grammar.Block)
		}
		if isBlock == want {
			out = append(out, tcl.Str(k.Text))
		}
	}
	return tcl.List(out...), nil
}

// registerEvent adds iCall's EVENT:: commands: the event a triggered
// handler runs for, or the one a perpetual handler's EVENT::get_next
// returned, and the handler's arguments (EVENT::context).
func registerEvent(t *tcl.Commands) {
	t.Register("EVENT::name", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("EVENT::name")
		}
		ev := stateOf(in).ev
		if ev == nil {
			return tcl.Empty, tcl.Errorf("EVENT::name: the script was not run for an event")
		}
		return tcl.Str(ev.Name), nil
	})
	t.Register("EVENT::context", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		st := stateOf(in)
		if st.ev == nil && len(st.env.Args) == 0 {
			return tcl.Empty, tcl.Errorf("EVENT::context: the script was not run for an event and its handler has no arguments")
		}
		kvs := st.context()
		switch len(args) {
		case 1:
			vs := make([]tcl.Value, 0, 2*len(kvs))
			for _, kv := range kvs {
				vs = append(vs, tcl.Str(kv[0]), tcl.Str(kv[1]))
			}
			return tcl.List(vs...), nil
		case 2:
			for _, kv := range kvs {
				if kv[0] == args[1].String() {
					return tcl.Str(kv[1]), nil
				}
			}
			return tcl.Empty, tcl.Errorf("EVENT::context: the event has no %s", args[1].String())
		}
		return tcl.Empty, tcl.WrongArgs("EVENT::context ?name?")
	})
	t.Register("EVENT::handler", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return tcl.Str(stateOf(in).env.Handler), nil
	})
	// EVENT::get_next waits for the next event the perpetual handler's
	// subscriptions take and makes it the current one (EVENT::name,
	// EVENT::context and their variables) [M: F5 names the command, not
	// its result; it returns the event's name]. A handler stopped,
	// changed or deleted ends the wait, and the run, with an error.
	t.Register("EVENT::get_next", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("EVENT::get_next")
		}
		st := stateOf(in)
		if st.env.Next == nil {
			return tcl.Empty, tcl.Errorf("EVENT::get_next: only the script of a perpetual handler waits for events")
		}
		ev, err := st.env.Next(st.ctx)
		if err != nil {
			return tcl.Empty, tcl.Errorf("EVENT::get_next: %v", err)
		}
		st.ev = ev
		st.setEventVars(in)
		return tcl.Str(ev.Name), nil
	})
}
