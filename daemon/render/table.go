package render

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openltm/openltm/dataplane"
)

// PoolMembersTable prints a compact one-line-per-member summary of a
// pool: who is up, who is taking traffic, and how unevenly — the view an
// operator wants when asking why a pool is unbalanced.
func PoolMembersTable(w io.Writer, ps dataplane.PoolStats, o Options) error {
	var buf bytes.Buffer
	t := plainTable(&buf)
	t.Header("Member", "Availability", "State", "Monitor", "Session", "Cur Conns", "Tot Conns", "Bits In", "Bits Out")
	for _, m := range ps.Members {
		tr := m.ServerSide
		if err := t.Append(o.rel(m.Name), string(m.Status.Availability), m.Status.State, m.MonitorStatus,
			m.SessionStatus, o.num(tr.CurConns), o.num(tr.TotConns), o.num(tr.BitsIn), o.num(tr.BitsOut)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The table pads every cell; trailing blanks make golden files fragile.
	var out strings.Builder
	out.WriteString("Ltm::Pool: " + o.rel(ps.Name) + "\n")
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		out.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// plainTable is a table in tmsh's plain columns: no borders or rules, left
// headers, two spaces between columns. The member and distribution tables
// use it.
func plainTable(buf *bytes.Buffer) *tablewriter.Table {
	return tablewriter.NewTable(buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
}
