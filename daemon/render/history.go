package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	unified "github.com/rogpeppe/go-internal/diff"

	"github.com/openltm/openltm/objects/store"
)

// History prints `show sys config-history`: one row per kept generation,
// the running one starred, each change cut to its first line and 60
// characters so the table stays readable.
func History(w io.Writer, list []store.Info, current uint64) error {
	if _, err := fmt.Fprintln(w, "Sys::Config History"); err != nil {
		return err
	}
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
	for _, g := range list {
		id := strconv.FormatUint(g.ID, 10)
		if g.ID == current {
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
	_, err := fmt.Fprintf(w, "Total records returned: %d\n", len(list))
	return err
}

// Generation prints `show sys config-history N`: when, who, and every
// command of the change.
func Generation(w io.Writer, g store.Generation) error {
	p := &printer{w: w}
	p.f("Generation %d\n  Time  %s\n  User  %s\n  Change\n", g.ID, g.Time.Local().Format(time.DateTime), g.User)
	for _, l := range strings.Split(g.Summary, "\n") {
		p.f("    %s\n", l)
	}
	return p.err
}

// HistoryDiff prints `show sys config-history diff A B`: a unified diff of
// the two generations' configuration text.
func HistoryDiff(w io.Writer, a, b store.Generation) error {
	_, err := w.Write(unified.Diff(fmt.Sprintf("generation %d", a.ID), []byte(a.Config), fmt.Sprintf("generation %d", b.ID), []byte(b.Config)))
	return err
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
