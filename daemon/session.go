package daemon

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// Session is one tmsh conversation with the engine: current folder, module
// context, and an open cli transaction.
type Session struct {
	e      *Engine
	user   string
	folder string
	module []string
	quit   bool

	tx    []string        // queued statements of an open cli transaction
	txCfg *objects.Config // the running config with the queued changes, to check each as it is queued
	inTx  bool
}

// Prompt implements control.Session.
func (s *Session) Prompt() control.PromptState {
	return control.PromptState{User: s.user, Host: s.e.Hostname(), Folder: s.folder,
		Module: strings.Join(s.module, "."), InTransaction: s.inTx, Quit: s.quit}
}

// Close implements control.Session: an uncommitted transaction is dropped.
func (s *Session) Close() { s.tx, s.inTx = nil, false }

// verbs are tmsh's commands, with their help text.
var verbs = map[string]string{
	"create":      "Create a configuration object",
	"edit":        "Edit configuration objects in $EDITOR (tmsh)",
	"modify":      "Modify a configuration object",
	"delete":      "Delete a configuration object",
	"list":        "List the configuration",
	"show":        "Show runtime status and statistics",
	"save":        "Save the running configuration",
	"load":        "Load a configuration file",
	"submit":      "Submit a cli transaction",
	"reset-stats": "Reset statistics",
	"cd":          "Change the current folder",
	"help":        "Show help",
	"exit":        "Leave the current module (or tmsh at the top)",
	"quit":        "Leave tmsh",
}

// Exec implements control.Session.
func (s *Session) Exec(ctx context.Context, line string, w io.Writer) error {
	st, err := parse(line, s.module)
	if err != nil {
		return err
	}
	if st == nil {
		return nil
	}
	words := st.Words()
	first, ok := st.Items[0].(*grammar.Word)
	if !ok {
		return synErr(st.Items[0], verbNames(), "a command cannot start with { }")
	}
	verb := first.Text
	args := st.Items[1:]

	// Queue changes while a transaction is open.
	if s.inTx && (verb == "create" || verb == "modify" || verb == "delete") && !isCliTx(words) {
		// Check it now against the queued changes, so a typo is caught at
		// the prompt; submit applies the queue again to the running config.
		cfg := s.txCfg.Clone()
		if err := s.change(st, verb, args, cfg); err != nil {
			return err
		}
		s.txCfg = cfg
		s.tx = append(s.tx, st.Source)
		return nil
	}

	switch verb {
	case "quit":
		s.quit = true
		return nil
	case "exit":
		if len(s.module) == 0 {
			s.quit = true
		} else {
			s.module = s.module[:len(s.module)-1]
		}
		return nil
	case "cd":
		return s.cd(st, args)
	case "help":
		return s.help(w)
	case "create", "modify", "delete":
		if isCliTx(words) {
			return s.cliTx(verb, w)
		}
		if verb == "delete" && s.isRuntimeTarget(verb, words[1:]) {
			return s.runtimeShow(ctx, st, verb, args, w)
		}
		return s.commitOne(st, verb, args)
	case "submit":
		if isCliTx(words) {
			return s.cliTx(verb, w)
		}
		return synErr(first, []string{"submit cli transaction"}, "%q: only a cli transaction can be submitted", strings.Join(words, " "))
	case "list":
		if isCliTx(words) {
			return s.cliTx(verb, w)
		}
		return s.list(ctx, st, args, w)
	case "show":
		return s.show(ctx, st, args, w)
	case "save":
		return s.save(st, args, w)
	case "load":
		return s.load(st, args, w)
	case "reset-stats":
		return s.resetStats(st, args, w)
	case "edit":
		return synErr(first, []string{"list", "modify"}, "edit runs in tmsh, which opens the objects in an editor; over the socket use list and load sys config merge")
	}
	// A module name enters the module: `ltm`, `ltm monitor`, `/sys`.
	mod := append(s.moduleFor(words), nil...)
	if s.e.schema.IsModulePath(mod) {
		s.module = mod
		return nil
	}
	return synErr(first, verbNames(), "%q unknown command", verb)
}

func verbNames() []string {
	var out []string
	for v := range verbs {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// isRuntimeTarget reports whether words name a runtime table the runtime
// answers verb for (delete sys connection, persist-records) rather than
// configuration, as typed or under the current module.
func (s *Session) isRuntimeTarget(verb string, words []string) bool {
	for _, abs := range [][]string{s.moduleFor(words), append(append([]string{}, s.module...), words...)} {
		for _, kw := range runtimeTargets {
			if hasPrefix(abs, kw) && s.e.runtimeFunc(verb, strings.Join(kw, " ")) != nil {
				return true
			}
		}
	}
	return false
}

func isCliTx(words []string) bool {
	return len(words) == 3 && words[1] == "cli" && words[2] == "transaction"
}

func synErr(n grammar.Node, expected []string, format string, args ...any) error {
	e := &objects.SyntaxError{Msg: fmt.Sprintf(format, args...), Expected: expected}
	if n != nil {
		e.Pos = n.Position()
	}
	return e
}

// moduleFor resolves words typed in the current module context to an
// absolute module path: a leading "/" means absolute, otherwise the words
// are tried under the current module first, then from the top.
func (s *Session) moduleFor(words []string) []string {
	if len(words) > 0 && strings.HasPrefix(words[0], "/") {
		w := append([]string{strings.TrimPrefix(words[0], "/")}, words[1:]...)
		return w
	}
	if len(s.module) > 0 {
		rel := append(append([]string{}, s.module...), words...)
		if s.e.schema.IsModulePath(rel) {
			return rel
		}
		if k, _ := s.e.schema.Match(rel); k != nil {
			return rel
		}
	}
	return words
}

// target is what a command's words name: a kind (with the remaining
// arguments) or a module level.
type target struct {
	kind   *objects.Kind
	module []string       // set when the words name a module level
	rest   []grammar.Node // arguments after the kind words
	words  []grammar.Node // the kind words themselves
}

// resolve reads the kind or module path at the start of args.
func (s *Session) resolve(args []grammar.Node) (target, error) {
	var ws []string
	var n int
	for _, a := range args {
		w, ok := a.(*grammar.Word)
		if !ok {
			break
		}
		ws = append(ws, w.Text)
		n++
	}
	abs := len(ws) > 0 && strings.HasPrefix(ws[0], "/") && !strings.Contains(ws[0][1:], "/")
	try := func(prefix []string) (target, bool) {
		full := append(append([]string{}, prefix...), ws...)
		if abs {
			full = append(append([]string{}, prefix...), append([]string{strings.TrimPrefix(ws[0], "/")}, ws[1:]...)...)
		}
		if k, used := s.e.schema.Match(full); k != nil {
			own := used - len(prefix)
			if own < 0 {
				return target{}, false
			}
			return target{kind: k, rest: args[own:], words: args[:own]}, true
		}
		// The longest module path.
		for m := len(full); m > len(prefix) || (m == len(prefix) && len(ws) == 0); m-- {
			if m > 0 && s.e.schema.IsModulePath(full[:m]) {
				own := m - len(prefix)
				return target{module: full[:m], rest: args[own:], words: args[:own]}, true
			}
		}
		if len(prefix) > 0 && len(ws) == 0 {
			return target{module: prefix, rest: args}, true
		}
		return target{}, false
	}
	if !abs && len(s.module) > 0 {
		if t, ok := try(s.module); ok {
			return t, nil
		}
	}
	if abs {
		if t, ok := try(nil); ok {
			return t, nil
		}
	} else if t, ok := try(nil); ok {
		return t, nil
	}
	if len(args) == 0 {
		return target{}, nil
	}
	var valid []string
	for w := range s.e.schema.Children(s.module) {
		valid = append(valid, w)
	}
	sort.Strings(valid)
	return target{}, synErr(args[0], valid, "%q unknown module or object type", firstText(args))
}

func firstText(ns []grammar.Node) string {
	if len(ns) == 0 {
		return ""
	}
	if w, ok := ns[0].(*grammar.Word); ok {
		return w.Text
	}
	return "{"
}

func (s *Session) reader(mode objects.Mode) *objects.Reader {
	return &objects.Reader{Schema: s.e.schema, Folder: s.folder, Mode: mode}
}

// commitOne runs a single create/modify/delete as its own generation.
func (s *Session) commitOne(st *grammar.Statement, verb string, args []grammar.Node) error {
	base := s.e.Generation()
	cfg := s.e.Config().Clone()
	if err := s.change(st, verb, args, cfg); err != nil {
		return err
	}
	_, err := s.e.Commit(base, s.user, st.Source, cfg, CommitOptions{})
	return err
}

// change applies one create/modify/delete statement to cfg.
func (s *Session) change(st *grammar.Statement, verb string, args []grammar.Node, cfg *objects.Config) error {
	t, err := s.resolve(args)
	if err != nil {
		return err
	}
	if t.kind == nil {
		if len(t.module) > 0 {
			kids := s.e.schema.Children(t.module)
			var valid []string
			for k := range kids {
				valid = append(valid, k)
			}
			sort.Strings(valid)
			var at grammar.Node = st
			if len(t.rest) > 0 {
				at = t.rest[0]
			}
			return synErr(at, valid, "%s needs an object type after %q", verb, strings.Join(t.module, " "))
		}
		return synErr(st, nil, "%s needs an object type, e.g. %s ltm pool NAME", verb, verb)
	}
	k := t.kind
	rest := t.rest
	var name string
	var nameNode grammar.Node = st
	if !k.Singleton {
		if len(rest) == 0 {
			return synErr(st, []string{"an object name"}, "%s %s needs a name", verb, k.Key())
		}
		if k == gtmTopology {
			// gtm topology ldns: ... server: ... { props }
			var ws []string
			i := 0
			for ; i < len(rest); i++ {
				w, ok := rest[i].(*grammar.Word)
				if !ok {
					break
				}
				ws = append(ws, w.Text)
			}
			name, rest = strings.Join(ws, " "), rest[i:]
		} else {
			nw, ok := rest[0].(*grammar.Word)
			if !ok {
				return synErr(rest[0], []string{"an object name"}, "%s %s needs a name before { }", verb, k.Key())
			}
			nameNode = nw
			name, rest = objects.FullPath(s.folder, nw.Text), rest[1:]
			if strings.HasPrefix(nw.Text, "/") && strings.Count(nw.Text, "/") < 2 {
				return synErr(nw, nil, "%q is not a valid object path: use /Partition/name", nw.Text)
			}
		}
	}
	switch verb {
	case "create":
		if k.Singleton {
			return synErr(st, []string{"modify"}, "%s always exists: use modify %s", k.Key(), k.Key())
		}
		if cfg.Get(k, name) != nil {
			return objects.Exists(k, name)
		}
		o := &objects.Object{Kind: k, Name: name, Props: map[string]*objects.Value{}}
		if err := s.reader(objects.ModeCreate).ReadProps(st, o, rest); err != nil {
			return err
		}
		initDefaults(o)
		cfg.Put(o)
		return nil
	case "modify":
		if name != "" && (strings.ContainsAny(name, "*?[") || path.Base(name) == "all") {
			matches := s.glob(cfg, k, name)
			if len(matches) == 0 {
				return objects.NotFound(k, name)
			}
			for _, old := range matches {
				o := old.Clone()
				if err := s.reader(objects.ModeModify).ReadProps(st, o, rest); err != nil {
					return err
				}
				cfg.Put(o)
			}
			return nil
		}
		old := cfg.Get(k, name)
		if old == nil {
			return objects.NotFound(k, name)
		}
		o := old.Clone()
		if err := s.reader(objects.ModeModify).ReadProps(st, o, rest); err != nil {
			return err
		}
		if len(rest) == 0 {
			return synErr(nameNode, []string{"a property to change"}, "modify %s %s changes nothing", k.Key(), objects.RelPath(s.folder, name))
		}
		cfg.Put(o)
		return nil
	case "delete":
		if k.Singleton {
			return synErr(st, nil, "%s cannot be deleted", k.Key())
		}
		names := []string{name}
		for _, r := range rest {
			w, ok := r.(*grammar.Word)
			if !ok {
				return synErr(r, []string{"an object name"}, "unexpected { } in delete")
			}
			names = append(names, objects.FullPath(s.folder, w.Text))
		}
		var victims []*objects.Object
		for _, n := range names {
			if strings.ContainsAny(n, "*?[") || path.Base(n) == "all" {
				for _, o := range s.glob(cfg, k, n) {
					if !o.BuiltIn {
						victims = append(victims, o)
					}
				}
				continue
			}
			o := cfg.Get(k, n)
			if o == nil {
				return objects.NotFound(k, n)
			}
			victims = append(victims, o)
		}
		for _, o := range victims {
			cfg.Delete(o)
		}
		for _, o := range victims {
			if err := cfg.CheckDelete(s.e.schema, o); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// glob finds objects of k whose full name matches pattern (`all` = every
// one in the folder).
func (s *Session) glob(cfg *objects.Config, k *objects.Kind, pattern string) []*objects.Object {
	if path.Base(pattern) == "all" {
		pattern = path.Dir(pattern) + "/*"
	}
	var out []*objects.Object
	for _, o := range cfg.Of(k) {
		if ok, _ := path.Match(pattern, o.Name); ok {
			out = append(out, o)
		}
	}
	return out
}

// initDefaults fills what BIG-IP sets on a new object: the parent of
// monitors, profiles and persistence; a virtual's always-listed settings,
// at their schema defaults.
func initDefaults(o *objects.Object) {
	set := func(name, v string) {
		if o.Props[name] == nil {
			o.Props[name] = &objects.Value{Str: v}
		}
	}
	if o.Kind.Parent != "" {
		set("defaults-from", o.Kind.Parent)
	}
	if o.Kind != ltmVirtual {
		return
	}
	for _, p := range virtualListed {
		set(p.Name, p.Default)
	}
	if virtualSNAT.Get(o) == nil {
		o.Props[virtualSNAT.Name] = &objects.Value{Sub: &objects.Item{Props: map[string]*objects.Value{snatType.Name: {Str: snatType.Default}}}}
	}
	if v := virtualProfiles.Get(o); v == nil || len(v.Items) == 0 {
		o.Props[virtualProfiles.Name] = &objects.Value{Items: []*objects.Item{{Name: virtualDefaultProfile, Props: map[string]*objects.Value{}}}}
	}
}

// virtualListed are the settings BIG-IP writes into every new virtual
// server, so that list shows them without all-properties.
var virtualListed = []*objects.Prop{virtualIPProtocol, virtualMask, virtualSource, virtualTranslateAddress, virtualTranslatePort}

// virtualDefaultProfile is the profile BIG-IP attaches to a virtual server
// created without one. The schema has no default for a collection's items,
// so this one lives here.
const virtualDefaultProfile = "/Common/fastL4"

// cd changes the current folder.
func (s *Session) cd(st *grammar.Statement, args []grammar.Node) error {
	if len(args) != 1 {
		return synErr(st, []string{"a folder, e.g. /Common"}, "cd takes one folder")
	}
	w, ok := args[0].(*grammar.Word)
	if !ok {
		return synErr(args[0], []string{"a folder"}, "cd takes a folder name")
	}
	var f string
	switch {
	case w.Text == "..":
		f = path.Dir(s.folder)
	case strings.HasPrefix(w.Text, "/"):
		f = path.Clean(w.Text)
	default:
		f = path.Join(s.folder, w.Text)
	}
	if f != "/" && !s.folderExists(f) {
		return &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested folder (%s) was not found.", f)}
	}
	s.folder = f
	return nil
}

func (s *Session) folderExists(f string) bool {
	if f == "/Common" {
		return true
	}
	for _, o := range s.e.Config().Objects() {
		if strings.HasPrefix(o.Name, f+"/") {
			return true
		}
	}
	return false
}

func (s *Session) help(w io.Writer) error {
	fmt.Fprintln(w, "Commands:")
	for _, v := range verbNames() {
		fmt.Fprintf(w, "  %-14s%s\n", v, verbs[v])
	}
	fmt.Fprintln(w, "Modules:")
	var mods []string
	for m := range s.e.schema.Children(nil) {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		fmt.Fprintf(w, "  %s\n", m)
	}
	fmt.Fprintln(w, "Type a command followed by ? (or press Tab) for what may follow.")
	return nil
}

// cliTx handles create / submit / delete / list cli transaction.
func (s *Session) cliTx(verb string, w io.Writer) error {
	switch verb {
	case "create":
		if s.inTx {
			return objects.Invalid("a cli transaction is already open: submit or delete it first")
		}
		s.inTx, s.tx, s.txCfg = true, nil, s.e.Config().Clone()
		return nil
	case "delete":
		if !s.inTx {
			return objects.Invalid("no cli transaction is open")
		}
		s.inTx, s.tx = false, nil
		return nil
	case "list":
		if !s.inTx {
			return objects.Invalid("no cli transaction is open")
		}
		for i, c := range s.tx {
			fmt.Fprintf(w, "%d: %s\n", i+1, c)
		}
		return nil
	case "submit":
		if !s.inTx {
			return objects.Invalid("no cli transaction is open")
		}
		queued := s.tx
		s.inTx, s.tx = false, nil
		if len(queued) == 0 {
			return nil
		}
		base := s.e.Generation()
		cfg := s.e.Config().Clone()
		for i, src := range queued {
			st, err := parse(src, s.module)
			if err != nil {
				return fmt.Errorf("transaction failed at command %d (%s): %w", i+1, src, err)
			}
			verb := st.Items[0].(*grammar.Word).Text
			if err := s.change(st, verb, st.Items[1:], cfg); err != nil {
				return fmt.Errorf("transaction failed at command %d (%s): %w; nothing was changed", i+1, src, err)
			}
		}
		if _, err := s.e.Commit(base, s.user, strings.Join(queued, "\n"), cfg, CommitOptions{}); err != nil {
			return fmt.Errorf("transaction failed: %w; nothing was changed", err)
		}
		return nil
	}
	return nil
}
