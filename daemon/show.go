package daemon

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/rogpeppe/go-internal/diff"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// ShowFunc answers one runtime command (show, reset-stats, delete) for
// the objects a session named. names are full paths ("" = all); opts are
// the option words that followed (raw, members, all-properties, filters).
type ShowFunc func(ctx context.Context, s *Session, names []string, opts []string, w io.Writer) error

// RegisterShow installs the runtime's answer to `verb <kind key>`, e.g.
// ("show", "ltm pool") or ("delete", "sys connection").
func (e *Engine) RegisterShow(verb, key string, fn ShowFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shows == nil {
		e.shows = map[string]ShowFunc{}
	}
	e.shows[verb+" "+key] = fn
}

func (e *Engine) showFunc(verb, key string) ShowFunc {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.shows[verb+" "+key]
}

// runtimeOnly are show targets that are not configuration kinds.
var runtimeOnly = map[string][]string{
	"sys connection":                  {"sys", "connection"},
	"sys config-history":              {"sys", "config-history"},
	"ltm persistence persist-records": {"ltm", "persistence", "persist-records"},
}

func (s *Session) show(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	abs := s.moduleFor(ws)
	if len(abs) >= 2 && abs[0] == "sys" && abs[1] == "config-history" {
		return s.history(args[len(ws)-len(abs)+2:], w)
	}
	if len(abs) >= 1 && abs[0] == "running-config" {
		return s.list(ctx, st, args[1:], w)
	}
	return s.runtimeShow(ctx, st, "show", args, w)
}

// runtimeShow resolves `<verb> <kind> [names] [options]` and calls the
// runtime's function for it.
func (s *Session) runtimeShow(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	// Runtime-only targets (sys connection, persist-records) are not kinds:
	// try them as typed and under the current module.
	for _, abs := range [][]string{s.moduleFor(ws), append(append([]string{}, s.module...), ws...)} {
		for key, kw := range runtimeOnly {
			if !hasPrefix(abs, kw) {
				continue
			}
			if fn := s.e.showFunc(verb, key); fn != nil {
				return fn(ctx, s, nil, abs[len(kw):], w)
			}
			if !isKindPrefix(s.e.schema, abs) {
				return objects.Invalid("%s %s is not available: no dataplane is running", verb, key)
			}
		}
	}
	t, err := s.resolve(args)
	if err != nil {
		return err
	}
	if t.kind == nil {
		return synErr(st, []string{"ltm virtual", "ltm pool", "ltm node", "sys connection", "sys config-history"}, "%s needs an object type", verb)
	}
	fn := s.e.showFunc(verb, t.kind.Key())
	if fn == nil {
		return objects.Invalid("%s %s is not available yet", verb, t.kind.Key())
	}
	var names, opts []string
	for _, a := range t.rest {
		wd := a.(*grammar.Word)
		if isShowOption(wd.Text) {
			opts = append(opts, wd.Text)
			continue
		}
		n := objects.FullPath(s.folder, wd.Text)
		if !strings.ContainsAny(n, "*?[") && s.e.Config().Get(t.kind, n) == nil {
			return objects.NotFound(t.kind, n)
		}
		names = append(names, n)
	}
	return fn(ctx, s, names, opts, w)
}

var showOptions = map[string]bool{
	"raw": true, "members": true, "all-properties": true, "detail": true, "field-fmt": true,
	"default": true, "kil": true, "meg": true, "gig": true, "tera": true, "recursive": true,
}

func isShowOption(w string) bool { return showOptions[w] }

// isKindPrefix reports whether words start with a configuration kind, so a
// runtime target sharing its first words (gtm pool) falls back to it.
func isKindPrefix(sc *objects.Schema, words []string) bool {
	k, _ := sc.Match(words)
	return k != nil
}

// Folder is the session's current folder, for runtimes printing names.
func (s *Session) Folder() string { return s.folder }

// history answers show sys config-history [N | diff N [M]].
func (s *Session) history(args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	num := func(i int) (uint64, error) {
		n, err := strconv.ParseUint(ws[i], 10, 64)
		if err != nil {
			return 0, synErr(args[i], []string{"a generation number"}, "%q is not a generation number", ws[i])
		}
		return n, nil
	}
	switch {
	case len(ws) == 0:
		list, err := s.e.store.List()
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "Sys::Config History")
		t := tablewriter.NewTable(trimWriter{w},
			tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
				Borders: tw.BorderNone, Symbols: tw.NewSymbols(tw.StyleNone),
				Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone}})),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithHeaderAlignment(tw.AlignLeft),
			tablewriter.WithRowAlignment(tw.AlignLeft),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
			tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}))
		t.Header("Generation", "Time", "User", "Change")
		cur := s.e.Generation()
		for _, g := range list {
			id := strconv.FormatUint(g.ID, 10)
			if g.ID == cur {
				id += "*"
			}
			change, more := g.Summary, ""
			if i := strings.IndexByte(change, '\n'); i >= 0 {
				change, more = change[:i], fmt.Sprintf(" (+%d more)", strings.Count(g.Summary, "\n"))
			}
			if len(change) > 60 {
				change = change[:57] + "..."
			}
			change += more
			t.Append(id, g.Time.Local().Format(time.DateTime), g.User, change)
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintf(w, "Total records returned: %d\n", len(list))
		return nil
	case ws[0] == "diff":
		if len(ws) < 2 || len(ws) > 3 {
			return synErr(args[0], []string{"diff FROM [TO]"}, "diff takes one or two generation numbers")
		}
		from, err := num(1)
		if err != nil {
			return err
		}
		to := s.e.Generation()
		if len(ws) == 3 {
			if to, err = num(2); err != nil {
				return err
			}
		}
		a, err := s.e.store.Get(from)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		b, err := s.e.store.Get(to)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		d := diff.Diff(fmt.Sprintf("generation %d", from), []byte(a.Config), fmt.Sprintf("generation %d", to), []byte(b.Config))
		_, err = w.Write(d)
		return err
	case len(ws) == 1:
		n, err := num(0)
		if err != nil {
			return err
		}
		g, err := s.e.store.Get(n)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		fmt.Fprintf(w, "Generation %d\n  Time  %s\n  User  %s\n  Change\n", g.ID, g.Time.Local().Format(time.DateTime), g.User)
		for _, l := range strings.Split(g.Summary, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		return nil
	}
	return synErr(args[0], []string{"a generation number", "diff"}, "%q unexpected argument", ws[0])
}

// trimWriter drops the trailing spaces tablewriter leaves on each line, so
// golden transcripts are not fragile.
type trimWriter struct{ w io.Writer }

func (t trimWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		b.WriteString(l)
		if nl {
			b.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
