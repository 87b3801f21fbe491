package grammar

import (
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types produced by the scanner. The grammar refers to them by the
// names in symbols.
const (
	tokWord lexer.TokenType = iota + 1
	tokString
	tokLBrace
	tokRBrace
	tokTcl
	tokEOL
)

var symbols = map[string]lexer.TokenType{
	"EOF":     lexer.EOF,
	"Word":    tokWord,
	"String":  tokString,
	"LBrace":  tokLBrace,
	"RBrace":  tokRBrace,
	"TclBody": tokTcl,
	"EOL":     tokEOL,
}

// rawKeys are the property names whose block is a script or a document
// (Tcl, APL, HTML) rather than configuration: the body is kept byte for byte.
var rawKeys = map[string]bool{
	"definition":     true, // sys icall script, and nested template definitions
	"implementation": true, // sys application template: Tcl
	"presentation":   true, // sys application template: APL
	"html-help":      true, // sys application template: HTML
	"macro":          true, // sys application template: Tcl
}

// collectionVerbs are the tmsh words that may stand between a collection's
// name and its block (`actions add { ... }`).
var collectionVerbs = map[string]bool{
	"add": true, "modify": true, "replace-all-with": true, "delete": true, "del": true,
}

// item remembers what the previous items of a statement or block were, so
// the scanner can tell that a `{` opens a script body.
type item struct {
	word bool // a word (bare or quoted); false for a block or nothing
	bare bool
	text string
}

// level is one statement (index 0 of the stack) or one open block.
type level struct {
	open         lexer.Position // the opening brace of a block
	prev1, prev2 item           // the last two items seen at this level
	prev3        item           // the item before prev2 (ltm cipher rule NAME)
	key1, key2   string         // the two bare words before the block's "{"
}

// scanner splits source text into the tokens of the grammar. It is written
// by hand rather than with a regular-expression lexer because where a Tcl
// body starts depends on the words before the brace, and where it ends
// depends on counting braces the way Tcl does; both need state that regular
// expressions cannot keep.
type scanner struct {
	src  string
	file string
	off  int

	line      int // line of off
	lineStart int // offset of the first byte of that line
	colOff    int // a known offset on the current line ...
	col       int // ... and its column, so columns are computed incrementally

	stack     []level
	stmtHas   bool // the current statement has produced a token
	icallBase bool // the module path names icall
	icall     bool // the current statement names icall before here

	queue []lexer.Token // tokens already scanned, handed out first
	done  bool

	header string

	// dangling is true when the input ends with a backslash that would
	// continue the line: more input is expected.
	dangling bool
}

func newScanner(file, src string, modulePath []string) *scanner {
	s := &scanner{src: src, file: file, line: 1, col: 1, stack: make([]level, 1, 8)}
	for _, w := range modulePath {
		if w == "icall" {
			s.icallBase = true
		}
	}
	s.icall = s.icallBase
	if strings.HasPrefix(src, "#TMSH-VERSION:") {
		end := strings.IndexByte(src, '\n')
		if end < 0 {
			end = len(src)
		}
		s.header = strings.TrimSpace(src[len("#TMSH-VERSION:"):end])
	}
	return s
}

// pos returns the position of offset off, which must not lie before the
// last position asked for.
func (s *scanner) pos(off int) lexer.Position {
	seg := s.src[s.colOff:off]
	if n := strings.Count(seg, "\n"); n > 0 {
		s.line += n
		s.lineStart = s.colOff + strings.LastIndexByte(seg, '\n') + 1
		s.colOff, s.col = s.lineStart, 1
		seg = s.src[s.colOff:off]
	}
	s.col += utf8.RuneCountInString(seg)
	s.colOff = off
	return lexer.Position{Filename: s.file, Offset: off, Line: s.line, Column: s.col}
}

func (s *scanner) errorf(p lexer.Position, expected string, incomplete bool, msg string) *Error {
	return &Error{Pos: toPos(p), Msg: msg, Expected: expected, Incomplete: incomplete}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// isWordByte reports whether c may appear in a bare word.
func isWordByte(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f', '{', '}', ';', '"':
		return false
	}
	return true
}

// continuation returns the length of a backslash-newline at i (2 or 3 with
// CRLF), or 0.
func (s *scanner) continuation(i int) int {
	if i+1 < len(s.src) && s.src[i] == '\\' {
		if s.src[i+1] == '\n' {
			return 2
		}
		if s.src[i+1] == '\r' && i+2 < len(s.src) && s.src[i+2] == '\n' {
			return 3
		}
	}
	return 0
}

// Next implements lexer.Lexer.
func (s *scanner) Next() (lexer.Token, error) {
	if len(s.queue) > 0 {
		t := s.queue[0]
		s.queue = s.queue[1:]
		return t, nil
	}
	if s.done {
		return lexer.EOFToken(s.pos(len(s.src))), nil
	}
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case isSpace(c):
			s.off++
		case c == '\\' && s.continuation(s.off) > 0:
			s.off += s.continuation(s.off)
			if s.off == len(s.src) {
				s.dangling = true // the continued line has not been typed yet
			}
		case s.finalBackslash(s.off):
			// A final backslash would continue onto a line not typed yet.
			s.dangling = true
			s.off = len(s.src)
		case c == '\n' || c == ';':
			if len(s.stack) > 1 {
				s.off++ // plain whitespace inside braces
				continue
			}
			start := s.off
			s.off++
			if s.stmtHas {
				s.endStatement()
				return lexer.Token{Type: tokEOL, Value: s.src[start:s.off], Pos: s.pos(start)}, nil
			}
		case c == '#' && (len(s.stack) > 1 || !s.stmtHas):
			end := strings.IndexByte(s.src[s.off:], '\n')
			if end < 0 {
				s.off = len(s.src)
			} else {
				s.off += end
			}
		case c == '"':
			return s.quoted()
		case c == '{':
			return s.openBrace()
		case c == '}':
			return s.closeBrace()
		default:
			start := s.off
			for s.off < len(s.src) && isWordByte(s.src[s.off]) && s.continuation(s.off) == 0 && !s.finalBackslash(s.off) {
				s.off++
			}
			text := s.src[start:s.off]
			s.push(item{word: true, bare: true, text: text})
			if text == "icall" && len(s.stack) == 1 {
				s.icall = true
			}
			return lexer.Token{Type: tokWord, Value: text, Pos: s.pos(start)}, nil
		}
	}
	if len(s.stack) > 1 {
		open := s.stack[len(s.stack)-1].open
		return lexer.Token{}, s.errorf(s.pos(len(s.src)), `"}"`, true,
			`unexpected end of input: missing "}" to close the block opened at `+shortPos(open))
	}
	s.done = true
	return lexer.EOFToken(s.pos(len(s.src))), nil
}

func shortPos(p lexer.Position) string {
	return Pos{Line: p.Line, Column: p.Column}.String()
}

// finalBackslash reports whether a backslash at i ends the input (perhaps
// followed by a carriage return).
func (s *scanner) finalBackslash(i int) bool {
	return s.src[i] == '\\' && (i+1 == len(s.src) || (i+2 == len(s.src) && s.src[i+1] == '\r'))
}

// push records an item at the current level.
func (s *scanner) push(it item) {
	if len(s.stack) == 1 {
		s.stmtHas = true
	}
	l := &s.stack[len(s.stack)-1]
	l.prev3, l.prev2, l.prev1 = l.prev2, l.prev1, it
}

func (s *scanner) endStatement() {
	s.stack[0] = level{}
	s.stmtHas = false
	s.icall = s.icallBase
}

func (s *scanner) quoted() (lexer.Token, error) {
	start := s.off
	i := start + 1
	for i < len(s.src) {
		switch s.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			i++
			s.off = i
			text := s.src[start:i]
			s.push(item{word: true, text: text})
			return lexer.Token{Type: tokString, Value: text, Pos: s.pos(start)}, nil
		}
		i++
	}
	return lexer.Token{}, s.errorf(s.pos(start), `a closing '"'`, true,
		`unterminated quoted string started here`)
}

// rawBlock reports whether the block opened at the current level holds a
// script that must be kept verbatim.
func (s *scanner) rawBlock() bool {
	l := &s.stack[len(s.stack)-1]
	if l.prev1.bare && rawKeys[l.prev1.text] {
		if l.prev1.text != "definition" || len(s.stack) == 1 {
			return true
		}
		// In an application template, `actions { definition { ... } }` holds
		// properties of its own (html-help, implementation, ...).
		return !(l.key1 == "actions" || (collectionVerbs[l.key1] && l.key2 == "actions"))
	}
	if len(s.stack) == 1 && l.prev2.bare && l.prev1.word {
		switch l.prev2.text {
		case "rule":
			// ltm rule NAME { script }, but ltm cipher rule NAME { props }.
			return !(l.prev3.bare && l.prev3.text == "cipher")
		case "script":
			return !s.icall
		}
	}
	return false
}

func (s *scanner) openBrace() (lexer.Token, error) {
	start := s.off
	open := s.pos(start)
	if s.rawBlock() {
		end, ok := tclEnd(s.src, start+1)
		if !ok {
			return lexer.Token{}, s.errorf(s.pos(len(s.src)), `"}"`, true,
				`unexpected end of input: missing "}" to close the script body opened at `+shortPos(open))
		}
		s.off = end + 1
		s.push(item{})
		s.queue = append(s.queue,
			lexer.Token{Type: tokTcl, Value: s.src[start+1 : end], Pos: s.pos(start + 1)},
			lexer.Token{Type: tokRBrace, Value: "}", Pos: s.pos(end)})
		return lexer.Token{Type: tokLBrace, Value: "{", Pos: open}, nil
	}
	s.off++
	if len(s.stack) == 1 {
		s.stmtHas = true
	}
	parent := s.stack[len(s.stack)-1]
	nl := level{open: open}
	if parent.prev1.bare {
		nl.key1 = parent.prev1.text
	}
	if parent.prev2.bare {
		nl.key2 = parent.prev2.text
	}
	s.stack = append(s.stack, nl)
	return lexer.Token{Type: tokLBrace, Value: "{", Pos: open}, nil
}

func (s *scanner) closeBrace() (lexer.Token, error) {
	p := s.pos(s.off)
	if len(s.stack) == 1 {
		return lexer.Token{}, s.errorf(p, `a word, a quoted string, "{" or the end of the statement`, false,
			`unexpected "}": no block is open here`)
	}
	s.off++
	s.stack = s.stack[:len(s.stack)-1]
	s.push(item{})
	return lexer.Token{Type: tokRBrace, Value: "}", Pos: p}, nil
}

// tclEnd finds the brace that closes a script body starting at offset start
// (just after its "{"), the way Tcl itself reads the body as a script:
//
//   - a backslash escapes the next character, so `\{` and `\}` never count;
//   - braces nest, and inside a nested braced word every unescaped brace
//     counts, even in a `#` line, exactly as Tcl counts them (an iRule whose
//     `when` body has an unbalanced brace in a comment is rejected by Tcl
//     too);
//   - at the top level of the body, a `#` where a command starts is a
//     comment up to the end of the line, and its braces do not count: Tcl
//     skips such comments when it evaluates the script, so a rule like
//     "# when HTTP_REQUEST {" above the real code is valid and must load.
//
// Quotes do not protect braces, as in Tcl. It returns the offset of the
// closing brace.
func tclEnd(src string, start int) (int, bool) {
	depth := 0
	cmdStart := true
	for i := start; i < len(src); i++ {
		c := src[i]
		if depth == 0 && cmdStart {
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '\v' || c == '\f' {
				continue
			}
			if c == '#' {
				for i < len(src) && src[i] != '\n' {
					if src[i] == '\\' {
						i++
					}
					i++
				}
				continue // the newline ends the comment and starts a command
			}
		}
		switch c {
		case '\\':
			i++
			cmdStart = false
		case '{':
			depth++
			cmdStart = false
		case '}':
			if depth == 0 {
				return i, true
			}
			depth--
		case '\n', ';':
			if depth == 0 {
				cmdStart = true
			}
		default:
			if depth == 0 && c != ' ' && c != '\t' && c != '\r' {
				cmdStart = false
			}
		}
	}
	return 0, false
}

func toPos(p lexer.Position) Pos {
	return Pos{File: p.Filename, Line: p.Line, Column: p.Column, Offset: p.Offset}
}
