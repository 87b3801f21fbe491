package daemon

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
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

	tx *transaction // the open cli transaction, or nil
	// committed is the generation the running (or last) Exec committed.
	committed uint64
	// dir is the client's working directory, for relative file names.
	dir string
	// warnings collects what the running command keeps without acting on.
	warnings []string
	// depth counts the scripts running this session's commands (run cli
	// script in a script, an iCall handler's), to bound their nesting.
	depth int
}

// SetDir implements control.DirSetter.
func (s *Session) SetDir(dir string) {
	if filepath.IsAbs(dir) {
		s.dir = dir
	}
}

// LastCommitted implements control.Committer: the shell learns that a
// command it interrupted had already been applied.
func (s *Session) LastCommitted() uint64 { return s.committed }

// Prompt implements control.Session.
func (s *Session) Prompt() control.PromptState {
	p := control.PromptState{User: s.user, Host: s.e.Hostname(), Folder: s.folder,
		Module: strings.Join(s.module, "."), InTransaction: s.tx != nil, Quit: s.quit}
	if h := s.e.cluster.Load(); h != nil {
		p.SyncStatus, p.Failover = h.syncState()
	}
	return p
}

// Close implements control.Session: an uncommitted transaction is dropped.
func (s *Session) Close() { s.tx = nil }

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
	"publish":     "Publish a draft policy (publish ltm policy Drafts/NAME)",
	"generate":    "Generate an iCall event (generate sys icall event NAME context { { name N value V } })",
	"run":         "Run an operation (run cm config-sync, run sys failover, run gtm trust-exchange)",
	"install":     "Install a certificate or key (install sys crypto cert|key NAME from-local-file PATH)",
	"mv":          "Rename an object (cm device)",
	"restart":     "Restart an ilx plugin's extensions (restart ilx plugin NAME) or an iCall perpetual handler's script",
	"start":       "Start a stopped iCall perpetual handler (start sys icall handler perpetual NAME)",
	"stop":        "Stop an iCall perpetual handler's script (stop sys icall handler perpetual NAME)",
	"cd":          "Change the current folder",
	"help":        "Show help",
	"exit":        "Leave the current module (or tmsh at the top)",
	"quit":        "Leave tmsh",
}

// Exec implements control.Session.
func (s *Session) Exec(ctx context.Context, line string, w io.Writer) error {
	s.committed = 0
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
	if s.tx != nil && (verb == "create" || verb == "modify" || verb == "delete" || verb == "publish") && !isCliTx(words) {
		return s.tx.queue(s, st, verb, args)
	}

	if ok, err := s.masterKeyCommand(ctx, st, verb, args, w); ok { // secure_vault.go
		return err
	}
	if ok, err := s.cryptoCertCommand(st, verb, args, w); ok { // crypto_cert.go
		return err
	}
	if ok, err := s.cryptoKeyCommand(ctx, st, verb, args, w); ok { // crypto_key.go
		return err
	}
	if ok, err := s.ucsCommand(st, verb, args, w); ok { // ucs.go
		return err
	}
	if ok, err := s.perpetualCommand(st, verb, args); ok { // icall.go
		return err
	}
	if ok, err := s.ilxCommand(ctx, st, verb, args, w); ok { // ilx.go
		return err
	}
	if ok, err := s.cmCommand(ctx, st, verb, args, w); ok { // cm_commands.go
		return err
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
			return s.cliTx(ctx, verb, w)
		}
		if verb == "delete" && s.isRuntimeTarget(verb, words[1:]) {
			return s.runtimeShow(ctx, st, verb, args, w)
		}
		return s.commitOne(ctx, st, verb, args, w)
	case "publish":
		return s.commitOne(ctx, st, verb, args, w)
	case "submit":
		if isCliTx(words) {
			return s.cliTx(ctx, verb, w)
		}
		return synErr(first, []string{"submit cli transaction"}, "%q: only a cli transaction can be submitted", strings.Join(words, " "))
	case "list":
		if isCliTx(words) {
			return s.cliTx(ctx, verb, w)
		}
		return s.list(ctx, st, args, w)
	case "show":
		return s.show(ctx, st, args, w)
	case "save":
		if ws := headWords(args); len(ws) >= 2 && ws[0] == "sys" && ws[1] == "ucs" {
			return s.saveUCS(st, ws[2:], w) // ucs.go
		}
		return s.save(st, args, w)
	case "load":
		if ws := headWords(args); len(ws) >= 2 && ws[0] == "sys" && ws[1] == "ucs" {
			return s.loadUCS(ctx, st, ws[2:], w) // ucs.go
		}
		return s.load(ctx, st, args, w)
	case "reset-stats":
		return s.resetStats(st, args, w)
	case "run":
		if rest, ok := s.afterKind(args, "cli", "script"); ok {
			return s.runCLIScript(ctx, st, rest, w) // icall.go
		}
		return s.runtimeShow(ctx, st, verb, args, w)
	case "generate":
		return s.generateEvent(st, args) // icall.go
	case "install":
		line, err := s.install(st, args) // sslfiles.go
		if err != nil {
			return err
		}
		cst, err := parse(line, nil)
		if err != nil {
			return err
		}
		return s.commitOne(ctx, cst, cst.Items[0].(*grammar.Word).Text, cst.Items[1:], w)
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

func synErr(n grammar.Node, expected []string, format string, args ...any) error {
	e := &objects.SyntaxError{Msg: fmt.Sprintf(format, args...), Expected: expected}
	if n != nil {
		e.Pos = n.Position()
	}
	return e
}

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
	cfg := s.e.Config()
	// A partition is a folder from its creation, as on a BIG-IP, and so
	// is a sys folder; either may still be empty.
	if k := s.e.schema.Kind("auth partition"); k != nil && strings.Count(f, "/") == 1 && cfg.Get(k, f[1:]) != nil {
		return true
	}
	if k := s.e.schema.Kind("sys folder"); k != nil && cfg.Get(k, f) != nil {
		return true
	}
	for _, o := range cfg.Objects() {
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
