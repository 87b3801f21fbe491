package grammar

import "strings"

// Printer writes configuration text in the two layouts BIG-IP uses, so that
// `list`, `list ... one-line` and `save sys config` share one writer:
//
//	ltm pool p {                  ltm pool p { members { a:80 { address 1.1.1.1 } } }
//	    members {
//	        a:80 {
//	            address 1.1.1.1
//	        }
//	    }
//	}
//
// Words passed to its methods are values: the printer quotes them with
// Quote. An empty block is written `name { }` in both layouts, as in saved
// files. The zero Printer writes the multi-line layout.
type Printer struct {
	// OneLine writes each top-level statement on a single line.
	OneLine bool

	b       strings.Builder
	depth   int
	pending bool // an Open whose block has no content yet
}

// NewPrinter returns a printer for the multi-line layout, or the one-line
// layout when oneLine is true.
func NewPrinter(oneLine bool) *Printer { return &Printer{OneLine: oneLine} }

const indentUnit = "    "

// begin starts a new line (or a new piece of a one-line statement) at the
// current depth.
func (p *Printer) begin() {
	if p.OneLine {
		if p.depth > 0 {
			p.b.WriteByte(' ')
		}
		p.pending = false
		return
	}
	if p.pending {
		p.b.WriteByte('\n')
		p.pending = false
	}
	for i := 0; i < p.depth; i++ {
		p.b.WriteString(indentUnit)
	}
}

// end finishes a line, or a top-level statement in one-line mode.
func (p *Printer) end() {
	if !p.OneLine || p.depth == 0 {
		p.b.WriteByte('\n')
	}
}

func (p *Printer) words(words []string) {
	for i, w := range words {
		if i > 0 {
			p.b.WriteByte(' ')
		}
		p.b.WriteString(Quote(w))
	}
}

// Open writes the words followed by "{" and enters the block; every Open
// needs a Close.
func (p *Printer) Open(words ...string) {
	p.begin()
	p.words(words)
	if len(words) > 0 {
		p.b.WriteByte(' ')
	}
	p.b.WriteByte('{')
	p.depth++
	p.pending = true
}

// Close ends the innermost open block.
func (p *Printer) Close() {
	if p.depth == 0 {
		return
	}
	p.depth--
	switch {
	case p.pending || p.OneLine:
		p.b.WriteString(" }")
	default:
		for i := 0; i < p.depth; i++ {
			p.b.WriteString(indentUnit)
		}
		p.b.WriteByte('}')
	}
	p.pending = false
	p.end()
}

// Line writes one property (or one statement at the top level).
func (p *Printer) Line(words ...string) {
	p.begin()
	p.words(words)
	p.end()
}

// Empty writes the words followed by an empty block, `name { }`, the way
// saved files write empty collections and members without properties.
func (p *Printer) Empty(words ...string) {
	p.Open(words...)
	p.Close()
}

// Script writes the words followed by a script body kept byte for byte,
// `ltm rule r {<body>}`: a Tcl body is never re-indented or reflowed, so it
// reads back identical.
func (p *Printer) Script(body string, words ...string) {
	p.begin()
	p.words(words)
	if len(words) > 0 {
		p.b.WriteByte(' ')
	}
	p.b.WriteString("{" + body + "}")
	p.end()
}

// Verbatim writes text that is already in configuration syntax (for
// example a Statement.Source kept for an object the schema does not know)
// as one line at the current depth.
func (p *Printer) Verbatim(text string) {
	p.begin()
	p.b.WriteString(text)
	p.end()
}

// String returns everything written so far.
func (p *Printer) String() string { return p.b.String() }

// Reset discards everything written, so one printer can serve many
// commands.
func (p *Printer) Reset() {
	p.b.Reset()
	p.depth = 0
	p.pending = false
}

// Render prints a node back in canonical form: words quoted only when they
// must be (a word quoted in its source stays quoted), blocks laid out with
// the 4-space indentation of saved files following the node's own line
// structure (a block written on one line stays on one line), scripts byte
// for byte. Parsing the result gives the same tree of words.
func Render(n Node) string {
	p := &Printer{}
	p.node(n)
	return p.String()
}

// RenderOneLine prints a node on one line like `list ... one-line` (a
// script body keeps its own newlines).
func RenderOneLine(n Node) string {
	return inline(n)
}

// RenderFile prints a whole file: the version header, then each statement.
func RenderFile(f *File) string {
	p := &Printer{}
	if f.Header != "" {
		p.b.WriteString("#TMSH-VERSION: " + f.Header + "\n\n")
	}
	for _, s := range f.Statements {
		p.node(s)
	}
	return p.String()
}

func (p *Printer) node(n Node) {
	switch n := n.(type) {
	case *Word:
		p.Verbatim(renderWord(n))
	case *Block:
		p.group(nil, n)
	case *Statement:
		// A statement must stay one logical line: only a final block that
		// spans lines may open onto new lines.
		last := n.Items[len(n.Items)-1]
		if b, ok := last.(*Block); ok && multiLine(b) {
			p.group(n.Items[:len(n.Items)-1], b)
			return
		}
		p.Verbatim(inlineItems(n.Items))
	}
}

// group writes head words followed by block b, opening it onto new lines.
func (p *Printer) group(head []Node, b *Block) {
	h := inlineItems(head)
	if b.Tcl || !multiLine(b) {
		if h != "" {
			h += " "
		}
		p.Verbatim(h + inline(b))
		return
	}
	p.begin()
	if h != "" {
		p.b.WriteString(h + " ")
	}
	p.b.WriteByte('{')
	p.depth++
	p.pending = true
	for _, line := range lines(b.Items) {
		last := line[len(line)-1]
		if lb, ok := last.(*Block); ok && multiLine(lb) {
			p.group(line[:len(line)-1], lb)
			continue
		}
		p.Verbatim(inlineItems(line))
	}
	p.Close()
}

// multiLine reports whether a configuration block spans lines in its source
// (and so is written over several lines).
func multiLine(b *Block) bool {
	return !b.Tcl && b.End.Line > b.Pos.Line && len(b.Items) > 0
}

func renderWord(w *Word) string {
	if w.Quoted {
		return quoteAlways(w.Text)
	}
	return Quote(w.Text)
}

func inline(n Node) string {
	switch n := n.(type) {
	case *Word:
		return renderWord(n)
	case *Block:
		if n.Tcl {
			return "{" + n.Raw + "}"
		}
		if len(n.Items) == 0 {
			return "{ }"
		}
		return "{ " + inlineItems(n.Items) + " }"
	case *Statement:
		return inlineItems(n.Items)
	}
	return ""
}

func inlineItems(items []Node) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(inline(it))
	}
	return b.String()
}

// lines groups items by the source line they start on: an item starting on
// the line where the previous item ended belongs to the same line. This is
// how a reader of a multi-line saved file tells where an unknown property's
// values end.
func lines(items []Node) [][]Node {
	var out [][]Node
	endLine := -1
	for _, it := range items {
		if len(out) == 0 || it.Position().Line > endLine {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], it)
		endLine = lastLine(it)
	}
	return out
}

// lastLine is the line a node's source text ends on.
func lastLine(n Node) int {
	switch n := n.(type) {
	case *Word:
		return n.Pos.Line + strings.Count(n.Raw, "\n")
	case *Block:
		return n.End.Line
	case *Statement:
		return n.Pos.Line + strings.Count(n.Source, "\n")
	}
	return 0
}
