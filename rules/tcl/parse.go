package tcl

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Source is a named script text; compiled commands keep offsets into it so
// that errors can say line and column.
type Source struct {
	Name string
	Text string
}

// Pos turns a byte offset into a 1-based line and column (in characters).
func (s *Source) Pos(off int) (line, col int) {
	if off > len(s.Text) {
		off = len(s.Text)
	}
	line = 1 + strings.Count(s.Text[:off], "\n")
	ls := strings.LastIndexByte(s.Text[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(s.Text[ls:off])
}

// SyntaxError is a compile-time error with its position, reported when a
// rule is loaded so that a bad rule never reaches the dataplane.
type SyntaxError struct {
	Name      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// Script is compiled Tcl: a list of commands whose words are already split
// and classified, evaluated many times without reparsing.
type Script struct {
	src  *Source
	cmds []*command
	off  int
	end  int
}

// Source returns the text the script was compiled from.
func (s *Script) Source() *Source { return s.src }

// Text returns the script's own text.
func (s *Script) Text() string { return s.src.Text[s.off:s.end] }

type command struct {
	words  []word
	off    int
	end    int
	src    *Source
	fn     *Command
	expand bool
	// lits holds the argument values when every word is a literal (most
	// commands in rules: pool names, TCP::release, precompiled if and
	// switch bodies), so that a resolved command is called with them as
	// they are and a proc call copies them onto the stack in one go.
	// Its capacity is its length, so a command appending to its
	// arguments gets a copy.
	lits []Value
	// plan, when set, runs the command without building its arguments:
	// if and switch forms whose shape is fixed at compile time.
	plan plan
}

type wordKind uint8

const (
	wLit wordKind = iota
	wVar
	wCmd
	wComp
)

type word struct {
	kind       wordKind
	lit        Value
	name       string
	index      *word
	static     bool
	script     *Script
	parts      []word
	expand     bool
	braced     bool
	off        int
	contentOff int
}

// compiler turns text into Scripts; lookup resolves literal command names.
type compiler struct {
	cmds  *Commands
	check func(name string, src *Source, off int) error
	ctx   any
}

// strict reports whether errors in precompiled bodies refuse the whole
// script (rules loading) or are left for run time, as Tcl itself does.
func (c *compiler) strict() bool { return c.check != nil }

type parser struct {
	c   *compiler
	src *Source
	s   string
	pos int
	end int
}

func (p *parser) errAt(off int, format string, args ...any) error {
	line, col := p.src.Pos(off)
	return &SyntaxError{Name: p.src.Name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// compileRange compiles src.Text[start:end] as a script.
func (c *compiler) compileRange(src *Source, start, end int) (*Script, error) {
	p := &parser{c: c, src: src, s: src.Text, pos: start, end: end}
	return p.parseScript(false)
}

func (p *parser) parseScript(inBracket bool) (*Script, error) {
	sc := &Script{src: p.src, off: p.pos}
	for {
		// skip separators between commands
		for p.pos < p.end {
			ch := p.s[p.pos]
			if isSpace(ch) || ch == ';' {
				p.pos++
			} else if ch == '\\' && p.pos+1 < p.end && p.s[p.pos+1] == '\n' {
				p.pos += 2
			} else {
				break
			}
		}
		if p.pos >= p.end {
			if inBracket {
				return nil, p.errAt(sc.off-1, "missing close-bracket")
			}
			sc.end = p.pos
			return sc, nil
		}
		if inBracket && p.s[p.pos] == ']' {
			sc.end = p.pos
			p.pos++
			return sc, nil
		}
		if p.s[p.pos] == '#' {
			for p.pos < p.end && p.s[p.pos] != '\n' {
				if p.s[p.pos] == '\\' && p.pos+1 < p.end {
					p.pos++
				}
				p.pos++
			}
			continue
		}
		cmd, err := p.parseCommand(inBracket)
		if err != nil {
			return nil, err
		}
		if cmd != nil {
			sc.cmds = append(sc.cmds, cmd)
		}
	}
}

func (p *parser) parseCommand(inBracket bool) (*command, error) {
	cmd := &command{off: p.pos, src: p.src}
	for {
		for p.pos < p.end {
			ch := p.s[p.pos]
			if ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v' {
				p.pos++
			} else if ch == '\\' && p.pos+1 < p.end && p.s[p.pos+1] == '\n' {
				p.pos += 2
			} else {
				break
			}
		}
		if p.pos >= p.end {
			break
		}
		ch := p.s[p.pos]
		if ch == '\n' || ch == ';' {
			p.pos++
			break
		}
		if inBracket && ch == ']' {
			break
		}
		w, err := p.parseWord(inBracket)
		if err != nil {
			return nil, err
		}
		if w.expand {
			cmd.expand = true
		}
		cmd.words = append(cmd.words, w)
	}
	cmd.end = p.pos
	if len(cmd.words) == 0 {
		return nil, nil
	}
	if err := p.c.finish(p, cmd); err != nil {
		return nil, err
	}
	cmd.lits = literalArgs(cmd)
	cmd.plan = planCommand(cmd)
	return cmd, nil
}

// literalArgs returns the words' values when all of them are literals, as
// finish left them (numbers parsed, bodies compiled), or nil.
func literalArgs(cmd *command) []Value {
	if cmd.expand {
		return nil
	}
	lits := make([]Value, len(cmd.words))
	for i := range cmd.words {
		if cmd.words[i].kind != wLit {
			return nil
		}
		lits[i] = cmd.words[i].lit
	}
	return lits
}

func (p *parser) atWordEnd(inBracket bool) bool {
	if p.pos >= p.end {
		return true
	}
	ch := p.s[p.pos]
	if isSpace(ch) || ch == ';' || (inBracket && ch == ']') {
		return true
	}
	return ch == '\\' && p.pos+1 < p.end && p.s[p.pos+1] == '\n'
}

func (p *parser) parseWord(inBracket bool) (word, error) {
	start := p.pos
	expand := false
	if strings.HasPrefix(p.s[p.pos:p.end], "{*}") && p.pos+3 < p.end && !isSpace(p.s[p.pos+3]) && p.s[p.pos+3] != ';' {
		expand = true
		p.pos += 3
	}
	var w word
	var err error
	switch p.s[p.pos] {
	case '{':
		w, err = p.parseBraced()
		if err == nil && !p.atWordEnd(inBracket) && !(p.c.cmds.Lenient && p.s[p.pos] == '{') {
			err = p.errAt(p.pos, "extra characters after close-brace")
		}
	case '"':
		p.pos++
		w, err = p.parseParts(func() bool { return p.s[p.pos] == '"' }, false, inBracket)
		if err == nil {
			if p.pos >= p.end {
				return w, p.errAt(start, `missing "`)
			}
			p.pos++
			if !p.atWordEnd(inBracket) {
				err = p.errAt(p.pos, "extra characters after close-quote")
			}
		}
	default:
		w, err = p.parseParts(func() bool { return p.atWordEnd(inBracket) }, true, inBracket)
	}
	w.off = start
	w.expand = expand
	return w, err
}

// parseBraced reads a {…} word: no substitution except backslash-newline.
func (p *parser) parseBraced() (word, error) {
	start := p.pos
	depth := 0
	i := p.pos
	for i < p.end {
		switch p.s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				content := p.s[start+1 : i]
				if strings.Contains(content, "\\\n") {
					content = collapseBackslashNewline(content)
				}
				p.pos = i + 1
				return word{kind: wLit, lit: Str(content), braced: true, contentOff: start + 1}, nil
			}
		case '\\':
			i++
		}
		i++
	}
	return word{}, p.errAt(start, "missing close-brace")
}

func collapseBackslashNewline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\n' {
				i += 2
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				b.WriteByte(' ')
				i--
				continue
			}
			b.WriteByte(s[i])
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseParts reads a word with substitutions until stop() is true (or the
// range ends). bare tells whether a backslash-newline ends the word.
func (p *parser) parseParts(stop func() bool, bare bool, inBracket bool) (word, error) {
	var parts []word
	var lit strings.Builder
	litStart := p.pos
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, word{kind: wLit, lit: Str(lit.String()), off: litStart})
			lit.Reset()
		}
	}
	for p.pos < p.end && !stop() {
		ch := p.s[p.pos]
		switch ch {
		case '\\':
			if bare && p.pos+1 < p.end && p.s[p.pos+1] == '\n' {
				goto done
			}
			r, n := backslash(p.s[p.pos:p.end])
			lit.WriteString(r)
			p.pos += n
		case '$':
			v, ok, err := p.parseVar(inBracket)
			if err != nil {
				return word{}, err
			}
			if !ok {
				lit.WriteByte('$')
				p.pos++
				continue
			}
			flush()
			parts = append(parts, v)
			litStart = p.pos
		case '[':
			off := p.pos
			p.pos++
			sc, err := p.parseScript(true)
			if err != nil {
				return word{}, err
			}
			flush()
			parts = append(parts, word{kind: wCmd, script: sc, off: off})
			litStart = p.pos
		default:
			lit.WriteByte(ch)
			p.pos++
		}
	}
done:
	flush()
	switch len(parts) {
	case 0:
		return word{kind: wLit, lit: Str("")}, nil
	case 1:
		return parts[0], nil
	}
	return word{kind: wComp, parts: parts}, nil
}

func isNameChar(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// parseVar reads $name, ${name} or $name(index) at p.pos (which is '$').
// ok is false when the dollar sign is not followed by a variable name.
func (p *parser) parseVar(inBracket bool) (word, bool, error) {
	start := p.pos
	i := p.pos + 1
	if i < p.end && p.s[i] == '{' {
		j := strings.IndexByte(p.s[i+1:p.end], '}')
		if j < 0 {
			return word{}, false, p.errAt(start, "missing close-brace for variable name")
		}
		name := p.s[i+1 : i+1+j]
		p.pos = i + 2 + j
		return varWord(name, nil, start), true, nil
	}
	j := i
	for j < p.end {
		if isNameChar(p.s[j]) {
			j++
		} else if p.s[j] == ':' && j+1 < p.end && p.s[j+1] == ':' {
			j += 2
			for j < p.end && p.s[j] == ':' {
				j++
			}
		} else {
			break
		}
	}
	if j == i && !(j < p.end && p.s[j] == '(') {
		return word{}, false, nil
	}
	name := p.s[i:j]
	p.pos = j
	if p.pos < p.end && p.s[p.pos] == '(' {
		p.pos++
		idx, err := p.parseParts(func() bool { return p.s[p.pos] == ')' }, false, inBracket)
		if err != nil {
			return word{}, false, err
		}
		if p.pos >= p.end {
			return word{}, false, p.errAt(start, "missing )")
		}
		p.pos++
		return varWord(name, &idx, start), true, nil
	}
	if name == "" {
		return word{}, false, nil
	}
	return varWord(name, nil, start), true, nil
}

func varWord(name string, idx *word, off int) word {
	return word{kind: wVar, name: name, index: idx, off: off, static: strings.HasPrefix(name, "static::") || strings.HasPrefix(name, "::static::")}
}

// finish resolves a command's name and precompiles the bodies and
// expressions of the control commands, so that nested scripts are checked
// at load time and never reparsed when run.
func (c *compiler) finish(p *parser, cmd *command) error {
	for i := range cmd.words {
		w := &cmd.words[i]
		if w.kind == wLit && !w.braced && i > 0 {
			if n, ok := parseInteger(w.lit.s); ok && n.kind == kInt {
				w.lit.i, w.lit.kind = n.i, kInt
			}
		}
	}
	w0 := &cmd.words[0]
	if w0.kind != wLit || w0.expand {
		return nil
	}
	name := w0.lit.s
	cmd.fn = c.cmds.lookup(name)
	if cmd.fn == nil && c.check != nil {
		if err := c.check(name, p.src, cmd.off); err != nil {
			return err
		}
	}
	if cmd.expand {
		return nil
	}
	ws := cmd.words
	script := func(i int) error {
		if i < len(ws) && ws[i].kind == wLit {
			return c.precompileScript(p.src, &ws[i])
		}
		return nil
	}
	exprAt := func(i int) error {
		if i < len(ws) && ws[i].kind == wLit {
			return c.precompileExpr(p.src, &ws[i])
		}
		return nil
	}
	lit := func(i int) string {
		if i < len(ws) && ws[i].kind == wLit {
			return ws[i].lit.s
		}
		return "\x00"
	}
	var err error
	switch {
	case cmd.fn == nil:
		return nil
	case cmd.fn.Name == "if":
		i := 1
		for i < len(ws) {
			if err = exprAt(i); err != nil {
				return err
			}
			i++
			if lit(i) == "then" {
				i++
			}
			if err = script(i); err != nil {
				return err
			}
			i++
			if lit(i) == "elseif" {
				i++
				continue
			}
			if lit(i) == "else" {
				i++
			}
			if i < len(ws) {
				err = script(i)
			}
			break
		}
	case cmd.fn.Name == "while":
		if err = exprAt(1); err == nil {
			err = script(2)
		}
	case cmd.fn.Name == "for":
		if err = script(1); err == nil {
			if err = exprAt(2); err == nil {
				if err = script(3); err == nil {
					err = script(4)
				}
			}
		}
	case cmd.fn.Name == "foreach" && len(ws) >= 4:
		err = script(len(ws) - 1)
	case cmd.fn.Name == "catch":
		err = script(1)
	case cmd.fn.Name == "expr" && len(ws) == 2:
		err = exprAt(1)
	case cmd.fn.Name == "eval" && len(ws) == 2:
		err = script(1)
	case cmd.fn.Name == "after" && len(ws) == 3 && lit(1) != "cancel" && lit(1) != "info" && lit(1) != "idle":
		err = script(2)
		if err == nil && cmd.fn.Compile != nil {
			err = cmd.fn.Compile(&Compiler{c: c, src: p.src, words: ws})
		}
	case cmd.fn.Name == "proc" && len(ws) == 4:
		err = script(3)
	case cmd.fn.Name == "switch":
		err = c.precompileSwitch(p.src, ws)
	case cmd.fn.Compile != nil:
		err = cmd.fn.Compile(&Compiler{c: c, src: p.src, words: ws})
	}
	return err
}

// wordRange gives the source range holding a literal word's text when it can
// be parsed in place (braced, or bare without backslashes), so that nested
// errors keep their real line and column.
func wordRange(src *Source, w *word) (int, int, bool) {
	if w.braced {
		start := w.contentOff
		end := start + len(w.lit.s)
		if end <= len(src.Text) && src.Text[start:end] == w.lit.s {
			return start, end, true
		}
		// backslash-newlines were collapsed: find the closing brace instead
		depth := 1
		i := start
		for i < len(src.Text) && depth > 0 {
			switch src.Text[i] {
			case '{':
				depth++
			case '}':
				depth--
			case '\\':
				i++
			}
			i++
		}
		return start, i - 1, true
	}
	end := w.off + len(w.lit.s)
	if end <= len(src.Text) && src.Text[w.off:end] == w.lit.s {
		return w.off, end, true
	}
	return 0, 0, false
}

// wordSource is where a literal word's text stands: its range in the
// rule's source when the word is written there as it is (so that errors
// point into the rule), else its own text (an escaped or quoted word).
func wordSource(src *Source, w *word) (*Source, int, int) {
	if start, end, ok := wordRange(src, w); ok {
		return src, start, end
	}
	return &Source{Name: src.Name, Text: w.lit.s}, 0, len(w.lit.s)
}

func (c *compiler) precompileScript(src *Source, w *word) error {
	if w.lit.kind == kScript {
		return nil
	}
	sc, err := c.compileRange(wordSource(src, w))
	if err != nil {
		if c.strict() {
			return err
		}
		return nil
	}
	w.lit = Value{s: w.lit.s, hasStr: true, rep: sc, kind: kScript}
	return nil
}

func (c *compiler) precompileExpr(src *Source, w *word) error {
	e, err := c.compileExpr(wordSource(src, w))
	if err != nil {
		if c.strict() {
			return err
		}
		return nil
	}
	w.lit = Value{s: w.lit.s, hasStr: true, rep: e, kind: kExpr}
	return nil
}

// precompileSwitch compiles the bodies of a switch whose patterns and bodies
// are one braced list, the usual form in rules.
func (c *compiler) precompileSwitch(src *Source, ws []word) error {
	i := 1
	for i < len(ws)-2 && ws[i].kind == wLit && strings.HasPrefix(ws[i].lit.s, "-") {
		o := ws[i].lit.s
		i++
		if o == "--" {
			break
		}
		if o == "-matchvar" || o == "-indexvar" {
			i++
		}
	}
	i++ // the string
	if i == len(ws)-1 && ws[i].kind == wLit && ws[i].braced {
		w := &ws[i]
		elems, offs, err := listWithOffsets(w.lit.s)
		if err != nil || w.lit.s != src.Text[w.contentOff:min(len(src.Text), w.contentOff+len(w.lit.s))] {
			return nil // reported at run time, as Tcl does
		}
		bodies := make([]Value, len(elems))
		for k := range elems {
			bodies[k] = elems[k]
			if k%2 == 1 && elems[k].s != "-" && offs[k] >= 0 {
				bw := word{kind: wLit, lit: elems[k], braced: true, contentOff: w.contentOff + offs[k]}
				if err := c.precompileScript(src, &bw); err != nil {
					return err
				}
				bodies[k] = bw.lit
			}
		}
		lv := List(bodies...)
		lv.s, lv.hasStr = w.lit.s, true
		w.lit = lv
		return nil
	}
	for k := i + 1; k < len(ws); k += 2 {
		if ws[k].kind == wLit && ws[k].lit.s != "-" {
			if err := c.precompileScript(src, &ws[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// listWithOffsets parses a list and reports, for each braced element, the
// offset of its content in s (-1 for other elements).
func listWithOffsets(s string) ([]Value, []int, error) {
	elems, err := parseList(s)
	if err != nil {
		return nil, nil, err
	}
	offs := make([]int, 0, len(elems))
	i := 0
	for range elems {
		for i < len(s) && isListSpace(s[i]) {
			i++
		}
		switch {
		case i < len(s) && s[i] == '{':
			offs = append(offs, i+1)
			depth := 0
			for i < len(s) {
				if s[i] == '{' {
					depth++
				} else if s[i] == '}' {
					depth--
					if depth == 0 {
						i++
						break
					}
				} else if s[i] == '\\' {
					i++
				}
				i++
			}
		case i < len(s) && s[i] == '"':
			offs = append(offs, -1)
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			i++
		default:
			start, plain := i, true
			for i < len(s) && !isListSpace(s[i]) {
				if s[i] == '\\' {
					plain = false
					i++
				}
				i++
			}
			if plain {
				offs = append(offs, start)
			} else {
				offs = append(offs, -1)
			}
		}
	}
	return elems, offs, nil
}

// Compiler is handed to a command's Compile hook so that commands outside
// this package (iRules commands taking script bodies) can precompile their
// literal arguments with positions.
type Compiler struct {
	c     *compiler
	src   *Source
	words []word
}

// NumWords is the number of words in the command being compiled.
func (cc *Compiler) NumWords() int { return len(cc.words) }

// Literal returns word i's text when it is a literal.
func (cc *Compiler) Literal(i int) (string, bool) {
	if i < len(cc.words) && cc.words[i].kind == wLit {
		return cc.words[i].lit.String(), true
	}
	return "", false
}

// Script precompiles word i as a script body when it is literal.
func (cc *Compiler) Script(i int) error {
	if i < len(cc.words) && cc.words[i].kind == wLit {
		return cc.c.precompileScript(cc.src, &cc.words[i])
	}
	return nil
}

// Expr precompiles word i as an expression when it is literal.
func (cc *Compiler) Expr(i int) error {
	if i < len(cc.words) && cc.words[i].kind == wLit {
		return cc.c.precompileExpr(cc.src, &cc.words[i])
	}
	return nil
}

// Context returns the value the host passed to CompileContext.
func (cc *Compiler) Context() any { return cc.c.ctx }

// Pos returns the line and column of word i.
func (cc *Compiler) Pos(i int) (int, int) {
	if i < len(cc.words) {
		return cc.src.Pos(cc.words[i].off)
	}
	return 0, 0
}

// Errorf reports a compile error at word i.
func (cc *Compiler) Errorf(i int, format string, args ...any) error {
	off := 0
	if i < len(cc.words) {
		off = cc.words[i].off
	}
	line, col := cc.src.Pos(off)
	return &SyntaxError{Name: cc.src.Name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// ErrorfWithin reports a compile error at byte off of word i's text, for
// a literal word whose text has parts of its own (a braced body of
// clauses): a braced word's text is where its source is; another's
// error is placed at the word.
func (cc *Compiler) ErrorfWithin(i, off int, format string, args ...any) error {
	if i >= len(cc.words) || !cc.words[i].braced || cc.words[i].kind != wLit {
		return cc.Errorf(i, format, args...)
	}
	w := &cc.words[i]
	if off < 0 || off > len(w.lit.s) || w.lit.s != cc.src.Text[w.contentOff:min(len(cc.src.Text), w.contentOff+len(w.lit.s))] {
		return cc.Errorf(i, format, args...)
	}
	line, col := cc.src.Pos(w.contentOff + off)
	return &SyntaxError{Name: cc.src.Name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// TopCommand describes one top-level command of a compiled script, for
// hosts that give the top level their own meaning (a rule's when and proc
// blocks). Literal words keep their precompiled bodies.
type TopCommand struct {
	Words   []Value
	Literal bool
	Line    int
	Col     int
	wordOff []int
	src     *Source
}

// WordPos returns the line and column of word i.
func (c TopCommand) WordPos(i int) (int, int) {
	if i < 0 || i >= len(c.wordOff) {
		return c.Line, c.Col
	}
	return c.src.Pos(c.wordOff[i])
}

// TopCommands lists the script's commands with their literal words.
func (s *Script) TopCommands() []TopCommand {
	out := make([]TopCommand, 0, len(s.cmds))
	for _, c := range s.cmds {
		tc := TopCommand{Literal: true, src: c.src}
		tc.Line, tc.Col = c.src.Pos(c.off)
		for _, w := range c.words {
			tc.wordOff = append(tc.wordOff, w.off)
			if w.kind != wLit || w.expand {
				tc.Literal = false
				tc.Words = append(tc.Words, Str(c.src.Text[w.off:min(len(c.src.Text), w.off+1)]))
				continue
			}
			tc.Words = append(tc.Words, w.lit)
		}
		out = append(out, tc)
	}
	return out
}

// ScriptOf returns the compiled script held by a value, or nil.
func ScriptOf(v Value) *Script {
	if v.kind == kScript {
		return v.rep.(*Script)
	}
	return nil
}

// IsInt reports whether v already holds an integer, without parsing.
func (v Value) IsInt() bool { return v.kind == kInt }
