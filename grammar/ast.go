// Package grammar turns tmsh command lines and bigip.conf text into a syntax
// tree of words and { } blocks, each node carrying its line and column, and
// writes words back in the canonical quoted form. It knows nothing of what a
// pool or a virtual is: the objects package reads the tree against the schema.
package grammar

import "fmt"

// Pos locates a node in its source so that every error a user can cause can
// point at the offending token (line and column are 1-based, Offset 0-based
// bytes).
type Pos struct {
	File   string
	Line   int
	Column int
	Offset int
}

// String renders the position the way users read it in error messages:
// "file:line:col", or "line:col" when the text came from the prompt.
func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Node is a word or a block; the objects package switches on the concrete type.
type Node interface {
	// Position is where the node starts.
	Position() Pos
}

// Word is one token of a statement: a bare word, or a quoted string already
// unquoted. Quoted is kept so that the printer and the schema can tell
// `"disabled"` (a value) from `disabled` (a flag) when it matters, and so that
// verbatim-kept properties are written back as they came.
type Word struct {
	Pos    Pos
	Text   string // the value, escapes resolved when Quoted
	Quoted bool
	Raw    string // the exact source text of the token, quotes included
}

// Position implements Node.
func (w *Word) Position() Pos { return w.Pos }

// Block is a { } group. Items holds the words and nested blocks inside it in
// order. Line structure is not kept as separate nodes: each item's Pos.Line
// tells which line it started on, which is how a reader decides how many
// words an unknown property takes in a multi-line saved file.
//
// A block that holds Tcl (the body of `ltm rule`, and the few other places
// that carry scripts) is not split into items: Tcl is true, Items is nil and
// Raw is the body byte for byte.
type Block struct {
	Pos   Pos // position of the opening brace
	End   Pos // position of the closing brace
	Items []Node
	Tcl   bool
	Raw   string // the exact source text between the braces (always set)
}

// Position implements Node.
func (b *Block) Position() Pos { return b.Pos }

// Statement is one command line or one top-level bigip.conf object: the words
// and blocks up to an unbraced newline or ';'.
type Statement struct {
	Pos   Pos
	Items []Node
	// Source is the statement's exact source text (without the terminating
	// newline or ';'), so objects the schema does not know can be kept and
	// saved back verbatim.
	Source string
}

// Position implements Node.
func (s *Statement) Position() Pos { return s.Pos }

// File is a parsed bigip.conf or tmsh batch script.
type File struct {
	// Header is the `#TMSH-VERSION: x` line when present, e.g. "15.1.0".
	Header     string
	Statements []*Statement
}
