package grammar

import (
	"errors"
	"io"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar. The scanner has already matched braces and cut
// script bodies out, so the grammar only has to say what a statement and a
// block are made of; the result is converted into the ast.go types, which
// carry the exact source text participle does not keep.

type pFile struct {
	Stmts []*pStmt `parser:"( @@ | EOL )*"`
}

type pStmt struct {
	Items []*pItem `parser:"@@+"`
}

type pItem struct {
	Word  lexer.Token `parser:"  @( Word | String )"`
	Block *pBlock     `parser:"| @@"`
}

type pBlock struct {
	Open  lexer.Token  `parser:"@LBrace"`
	Tcl   *lexer.Token `parser:"@TclBody?"`
	Items []*pItem     `parser:"@@*"`
	Close lexer.Token  `parser:"@RBrace"`
}

// definition lets participle build the grammar against the scanner's token
// names; Parse feeds it a scanner directly so each parse can carry its own
// options.
type definition struct{}

func (definition) Symbols() map[string]lexer.TokenType { return symbols }

func (definition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return newScanner(filename, string(b), nil), nil
}

func (definition) LexString(filename, src string) (lexer.Lexer, error) {
	return newScanner(filename, src, nil), nil
}

var parser = participle.MustBuild[pFile](
	participle.Lexer(definition{}),
	participle.UseLookahead(1),
)

// Grammar returns the EBNF of the statement grammar, for documentation and
// for the test that proves the grammar builds.
func Grammar() string { return parser.String() }

// Options adjust how text is read where the words alone do not decide it.
type Options struct {
	// ModulePath is the shell's current module path (for example
	// ["sys", "icall"]). It matters only for `create script NAME { ... }`:
	// under cli the block is a Tcl body, under sys icall it holds properties.
	ModulePath []string
}

// Parse reads a whole bigip.conf file or a tmsh batch script: both are a
// sequence of statements, so the shell and the configuration loader share
// one reader and one set of error messages. filename is only used in
// positions ("" for text typed at the prompt).
func Parse(filename string, src []byte) (*File, error) {
	return ParseWith(filename, src, Options{})
}

// ParseWith is Parse for text whose meaning depends on where the shell is
// (see Options).
func ParseWith(filename string, src []byte, opts Options) (*File, error) {
	if err := checkText(filename, src); err != nil {
		return nil, err
	}
	text := string(src)
	sc := newScanner(filename, text, opts.ModulePath)
	peek, err := lexer.Upgrade(sc)
	if err != nil {
		return nil, convertError(err)
	}
	tree, err := parser.ParseFromLexer(peek)
	if err != nil {
		return nil, convertError(err)
	}
	f := &File{Header: sc.header, Statements: make([]*Statement, 0, len(tree.Stmts))}
	for _, ps := range tree.Stmts {
		f.Statements = append(f.Statements, convertStmt(text, ps))
	}
	return f, nil
}

// ParseStatement reads exactly one statement (one command line, possibly
// spanning lines inside braces), the usual case for the interactive shell.
// Empty input or input holding several statements is an error.
func ParseStatement(src string, opts Options) (*Statement, error) {
	f, err := ParseWith("", []byte(src), opts)
	if err != nil {
		return nil, err
	}
	switch len(f.Statements) {
	case 1:
		return f.Statements[0], nil
	case 0:
		return nil, &Error{Pos: Pos{Line: 1, Column: 1}, Msg: "empty command", Expected: "a command"}
	}
	second := f.Statements[1].Pos
	return nil, &Error{Pos: second, Msg: "more than one command: a new command starts here", Expected: "the end of input"}
}

func convertError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var pe participle.Error
	if errors.As(err, &pe) {
		return &Error{Pos: toPos(pe.Position()), Msg: pe.Message()}
	}
	return &Error{Msg: err.Error()}
}

func convertStmt(src string, ps *pStmt) *Statement {
	st := &Statement{Items: convertItems(src, ps.Items)}
	st.Pos = st.Items[0].Position()
	st.Source = src[st.Pos.Offset:nodeEnd(st.Items[len(st.Items)-1])]
	return st
}

func convertItems(src string, items []*pItem) []Node {
	if len(items) == 0 {
		return nil
	}
	out := make([]Node, 0, len(items))
	for _, it := range items {
		if it.Block == nil {
			out = append(out, convertWord(&it.Word))
			continue
		}
		b := &Block{
			Pos: toPos(it.Block.Open.Pos),
			End: toPos(it.Block.Close.Pos),
			Raw: src[it.Block.Open.Pos.Offset+1 : it.Block.Close.Pos.Offset],
		}
		if it.Block.Tcl != nil {
			b.Tcl = true
		} else {
			b.Items = convertItems(src, it.Block.Items)
		}
		out = append(out, b)
	}
	return out
}

func convertWord(t *lexer.Token) *Word {
	w := &Word{Pos: toPos(t.Pos), Raw: t.Value, Text: t.Value}
	if t.Type == tokString {
		w.Quoted = true
		w.Text = unquote(t.Value[1 : len(t.Value)-1])
	}
	return w
}

// nodeEnd is the offset just past a node's source text.
func nodeEnd(n Node) int {
	switch n := n.(type) {
	case *Word:
		return n.Pos.Offset + len(n.Raw)
	case *Block:
		return n.End.Offset + 1
	case *Statement:
		return n.Pos.Offset + len(n.Source)
	}
	return 0
}

// unquote resolves the two escapes BIG-IP itself resolves in a quoted
// string, \" and \\. Every other backslash sequence stays as the two
// characters it is written with: monitor send strings are stored with a
// literal `\r\n` that the monitor expands when it sends, and the
// configuration writes them back the same way, so turning them into control
// characters here would change what is saved.
func unquote(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}
