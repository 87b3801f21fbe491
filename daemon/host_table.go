package daemon

import (
	"io"
	"strings"
)

// hostColumn is one column of the host shows' tables: its heading (one
// or two lines, as Net::Interface's "Bits" over "In") and whether its
// cells align right, as tmsh aligns counters.
type hostColumn struct {
	head  []string
	right bool
}

// hostTable is one of tmsh's statistics tables: headings between dashes,
// then rows, two blanks between columns, no trailing blanks.
type hostTable struct {
	cols []hostColumn
	rows [][]string
}

func (t *hostTable) add(cells ...string) { t.rows = append(t.rows, cells) }

// widths are the columns' widths: the widest heading or cell.
func (t *hostTable) widths() []int {
	w := make([]int, len(t.cols))
	for i, c := range t.cols {
		for _, h := range c.head {
			w[i] = max(w[i], len(h))
		}
	}
	for _, r := range t.rows {
		for i, cell := range r {
			if i < len(w) {
				w[i] = max(w[i], len(cell))
			}
		}
	}
	return w
}

func (t *hostTable) line(width []int, cells []string) string {
	var b strings.Builder
	for i, c := range t.cols {
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		if i > 0 {
			b.WriteString("  ")
		}
		pad := strings.Repeat(" ", max(0, width[i]-len(cell)))
		if c.right {
			b.WriteString(pad + cell)
		} else {
			b.WriteString(cell + pad)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// text is the table with the given widths: its headings, dashes as wide
// as the table (or as title, printed under the top dashes when given, as
// Net::Interface prints its name), rows.
func (t *hostTable) text(width []int, title string) string {
	total := 0
	for i := range width {
		total += width[i]
		if i > 0 {
			total += 2
		}
	}
	dashes := strings.Repeat("-", max(total, len(title)))
	var b strings.Builder
	b.WriteString(dashes + "\n")
	if title != "" {
		b.WriteString(title + "\n")
	}
	lines := 0
	for _, c := range t.cols {
		lines = max(lines, len(c.head))
	}
	for l := 0; l < lines; l++ {
		cells := make([]string, len(t.cols))
		for i, c := range t.cols {
			if l < len(c.head) {
				cells[i] = c.head[l]
			}
		}
		b.WriteString(t.line(width, cells) + "\n")
	}
	b.WriteString(dashes + "\n")
	for _, r := range t.rows {
		b.WriteString(t.line(width, r) + "\n")
	}
	return b.String()
}

// writeTitled prints one table with its title under the top dashes
// (Net::Interface, Net::Routes).
func (t *hostTable) writeTitled(w io.Writer, title string) error {
	_, err := io.WriteString(w, t.text(t.widths(), title))
	return err
}

// writeSection prints a titled section of tables of the same columns'
// count, as Sys::Performance System prints its CPU and memory tables:
// the title, then each table between dashes, a blank line between them,
// every table as wide as the widest so their columns line up.
func writeSection(w io.Writer, title string, tables ...*hostTable) error {
	var width []int
	for _, t := range tables {
		tw := t.widths()
		for i, v := range tw {
			if i >= len(width) {
				width = append(width, v)
			} else {
				width[i] = max(width[i], v)
			}
		}
	}
	var b strings.Builder
	b.WriteString(title + "\n")
	for i, t := range tables {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t.text(width, ""))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hostBlock prints "  Key  value" lines under a dashed title, as
// Sys::Host Memory and Sys::TMM print theirs: values right-aligned
// (counters) or left-aligned (text). A row whose key is "" prints its
// value flush left, a subheading (TMM: 0) or, empty, a blank line.
func hostBlock(w io.Writer, title string, right bool, rows [][2]string) error {
	kw, vw := 0, 0
	for _, r := range rows {
		if r[0] != "" {
			kw, vw = max(kw, len(r[0])), max(vw, len(r[1]))
		}
	}
	dashes := strings.Repeat("-", max(len(title), kw+vw+4))
	var b strings.Builder
	b.WriteString(dashes + "\n" + title + "\n" + dashes + "\n")
	for _, r := range rows {
		if r[0] == "" {
			b.WriteString(r[1] + "\n")
			continue
		}
		pad := strings.Repeat(" ", kw-len(r[0])+2)
		if right {
			pad += strings.Repeat(" ", vw-len(r[1]))
		}
		b.WriteString(strings.TrimRight("  "+r[0]+pad+r[1], " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
