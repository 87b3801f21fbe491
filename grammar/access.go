package grammar

// Texts returns the text of every word among items, skipping blocks: the
// values of a list such as `vlans { /Common/a /Common/b }` or `rules { r1 r2 }`.
func Texts(items []Node) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if w, ok := it.(*Word); ok {
			out = append(out, w.Text)
		}
	}
	return out
}

// Words returns the text of each word directly inside the block, for blocks
// that are plain lists.
func (b *Block) Words() []string { return Texts(b.Items) }

// Lines groups the block's items by the source line they start on (an item
// starting where the previous one ended stays with it). A multi-line saved
// file writes one property per line, so this is how a reader tells how many
// values a property it does not know takes.
func (b *Block) Lines() [][]Node { return lines(b.Items) }

// Empty reports whether the block is `{ }` (for a script body: whether it
// holds only white space).
func (b *Block) Empty() bool {
	if b.Tcl {
		for i := 0; i < len(b.Raw); i++ {
			if !isSpace(b.Raw[i]) && b.Raw[i] != '\n' {
				return false
			}
		}
		return true
	}
	return len(b.Items) == 0
}

// String renders the block canonically (see Render).
func (b *Block) String() string { return RenderOneLine(b) }

// Words returns the text of each word of the statement, skipping blocks.
func (s *Statement) Words() []string { return Texts(s.Items) }

// Head returns the words before the statement's first block: for
// `ltm pool /Common/p { ... }` that is ltm, pool and /Common/p, which is
// what the schema looks up to learn what the block means.
func (s *Statement) Head() []*Word {
	var out []*Word
	for _, it := range s.Items {
		w, ok := it.(*Word)
		if !ok {
			break
		}
		out = append(out, w)
	}
	return out
}

// String renders the statement canonically on one line.
func (s *Statement) String() string { return RenderOneLine(s) }

// String returns the word as it would be written back (see Quote); a word
// quoted in its source stays quoted.
func (w *Word) String() string { return renderWord(w) }

// End is the position just past the node's source text, so error messages
// can point after a word ("expected a value after ...").
func End(n Node) Pos {
	switch n := n.(type) {
	case *Word:
		return advance(n.Pos, n.Raw)
	case *Block:
		p := n.End
		p.Offset++
		p.Column++
		return p
	case *Statement:
		return advance(n.Pos, n.Source)
	}
	return Pos{}
}

// advance moves p over text.
func advance(p Pos, text string) Pos {
	p.Offset += len(text)
	for _, r := range text {
		if r == '\n' {
			p.Line++
			p.Column = 1
			continue
		}
		p.Column++
	}
	return p
}
