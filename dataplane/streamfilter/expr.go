package streamfilter

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// delimiters are the characters that may open a set, as BIG-IP lists them.
const delimiters = "@/&_=-:?*.,"

// delimiterList spells the delimiters out for error messages.
const delimiterList = "@ / & _ = - : ? * . ,"

// unbounded is the maximum length of a search that can match arbitrarily
// long strings.
const unbounded = -1

// lengthLimit caps length arithmetic; anything longer counts as unbounded.
const lengthLimit = 1 << 30

// Expr is a parsed, compiled stream expression. It holds no per-stream
// state, so one Expr serves every connection of a virtual server and is
// safe for concurrent use; each stream gets its own Filter.
type Expr struct {
	text string
	sets []set
	// all is the alternation of every set, nil when there is one set and
	// its own regexp is used directly.
	all *regexp.Regexp
	// maxLen is the longest match, in bytes, any set can make, or
	// unbounded.
	maxLen int
	// perSet is set when each set is searched on its own rather than
	// through all: when there is one set, or when every set starts with
	// literal text, which a substring search finds far faster than the
	// alternation's scan one position at a time.
	perSet bool
	// prefixed: every set's matches start with literal text (its
	// prefix), so a filter holds back only the bytes that could begin
	// one (holdFrom) rather than the whole window: a line protocol's
	// line end is not kept waiting for data that never comes.
	prefixed bool
}

// set is one <d>search<d>replacement<d>.
type set struct {
	search string
	repl   []byte
	re     *regexp.Regexp
	// lit is the search when it is a plain literal, found with
	// bytes.Index instead of the regexp engine.
	lit []byte
	// prefix is the literal text every match of the set starts with
	// (empty: none).
	prefix []byte
	// group is the index of the capture group wrapping this set in
	// Expr.all.
	group int
}

// cacheCap bounds the parse cache. A rule calls STREAM::expression with
// the same literal for every response; the cap keeps rules that build
// expressions from request data from growing the cache without limit.
const cacheCap = 1024

var cache = struct {
	sync.RWMutex
	m map[string]*Expr
}{m: make(map[string]*Expr)}

// Parse parses and compiles an expression in BIG-IP's stream syntax, the
// argument of STREAM::expression. An iRule evaluates the command for every
// response, usually with the same literal text, so successful results are
// cached by text (at most 1024 of them; the cache starts over when full)
// and parsing the same text again does not recompile it. An error names
// the byte offset of the problem in s and what would be valid there.
func Parse(s string) (*Expr, error) {
	cache.RLock()
	e := cache.m[s]
	cache.RUnlock()
	if e != nil {
		return e, nil
	}
	e, err := parse(s)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	if len(cache.m) >= cacheCap {
		clear(cache.m)
	}
	cache.m[s] = e
	cache.Unlock()
	return e, nil
}

// Profile builds the expression of an `ltm profile stream` from its source
// and target properties, so the profile and the iRule commands share one
// filter. When source is empty or "none", target carries a whole
// expression in the syntax Parse takes (that is how bigip.conf files
// usually hold it, e.g. target "@http://@https://@"), and when target is
// empty or "none" too the result is nil, nil: the profile rewrites
// nothing. When source is set it is a literal string, not a regular
// expression, replaced by target taken literally ("none" meaning empty).
func Profile(source, target string) (*Expr, error) {
	if source == "" || source == "none" {
		if target == "" || target == "none" {
			return nil, nil
		}
		return Parse(target)
	}
	repl := target
	if repl == "none" {
		repl = ""
	}
	if !utf8.ValidString(source) {
		return nil, fmt.Errorf("stream profile source %s is not valid UTF-8", strconv.Quote(source))
	}
	search := regexp.QuoteMeta(source)
	re, err := regexp.Compile(search)
	if err != nil {
		return nil, fmt.Errorf("stream profile source %s: %v", strconv.Quote(source), err)
	}
	// The text is the same filter in the expression syntax, so that a
	// rule's state (which holds expressions as text) can carry it.
	d := strings.IndexFunc(delimiters, func(r rune) bool { return !strings.ContainsRune(search+repl, r) })
	if d < 0 {
		return nil, fmt.Errorf("stream profile source %s and target %s use every delimiter (%s): no expression can hold them", strconv.Quote(source), strconv.Quote(target), delimiterList)
	}
	dl := delimiters[d : d+1]
	lit := literal(re)
	return &Expr{
		text:     dl + search + dl + repl + dl,
		sets:     []set{{search: search, repl: []byte(repl), re: re, lit: lit, prefix: lit, group: 1}},
		maxLen:   len(source),
		perSet:   true,
		prefixed: true,
	}, nil
}

// String returns the expression's text as given to Parse, for show output
// and logs. An Expr built by Profile from a literal source reads
// `source "..." target "..."`. A nil Expr gives "".
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.text
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// quoteAt quotes the character at s[i:] for an error message.
func quoteAt(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte 0x%02x", s[i])
	}
	return strconv.QuoteRune(r)
}

func parse(s string) (*Expr, error) {
	i := skipSpace(s, 0)
	if i == len(s) {
		return nil, fmt.Errorf("stream expression is empty (offset %d): expected one or more sets such as @search@replacement@", i)
	}
	e := &Expr{text: s}
	var trees []*syntax.Regexp
	for i < len(s) {
		start := i
		d := s[i]
		if strings.IndexByte(delimiters, d) < 0 {
			return nil, fmt.Errorf("stream expression: %s at offset %d cannot start a set: a set is <d>search<d>replacement<d> where <d> is one of %s", quoteAt(s, i), i, delimiterList)
		}
		j := strings.IndexByte(s[i+1:], d)
		if j < 0 {
			return nil, fmt.Errorf("stream expression: the set at offset %d has no %q ending its search (the expression ends at offset %d): a set is %c<search>%c<replacement>%c; if the search contains %q, use another delimiter (%s)", start, d, len(s), d, d, d, d, delimiterList)
		}
		searchAt, searchEnd := i+1, i+1+j
		if j == 0 {
			return nil, fmt.Errorf("stream expression: the set at offset %d has an empty search at offset %d: the search must be a non-empty regular expression", start, searchAt)
		}
		k := strings.IndexByte(s[searchEnd+1:], d)
		if k < 0 {
			return nil, fmt.Errorf("stream expression: the set at offset %d has no %q ending its replacement (the expression ends at offset %d): a set is %c<search>%c<replacement>%c with three delimiters; if the replacement contains %q, use another delimiter (%s)", start, d, len(s), d, d, d, d, delimiterList)
		}
		replAt, replEnd := searchEnd+1, searchEnd+1+k
		i = replEnd + 1
		if i < len(s) && !isSpace(s[i]) && strings.IndexByte(delimiters, s[i]) < 0 {
			return nil, fmt.Errorf("stream expression: unexpected %s at offset %d right after the set at offset %d: a set is followed by whitespace or by the delimiter that starts the next set", quoteAt(s, i), i, start)
		}
		search := s[searchAt:searchEnd]
		st, tree, err := compileSearch(search, searchAt)
		if err != nil {
			return nil, err
		}
		st.repl = []byte(s[replAt:replEnd])
		e.sets = append(e.sets, st)
		trees = append(trees, tree)
		i = skipSpace(s, i)
	}
	e.maxLen = 0
	for _, t := range trees {
		e.maxLen = maxOf(e.maxLen, maxLen(t))
	}
	e.perSet, e.prefixed = true, true
	for i := range e.sets {
		prefix, _ := e.sets[i].re.LiteralPrefix()
		if prefix == "" {
			e.perSet, e.prefixed = len(e.sets) == 1, false
		}
		e.sets[i].prefix = []byte(prefix)
	}
	if len(e.sets) == 1 {
		e.sets[0].group = 1
		return e, nil
	}
	if err := e.combine(trees); err != nil {
		return nil, err
	}
	return e, nil
}

// compileSearch checks and compiles one search; at is its offset in the
// expression, for error messages.
func compileSearch(search string, at int) (set, *syntax.Regexp, error) {
	// (regexp.Compile parses with the same flags: one error covers both.)
	tree, err := syntax.Parse(search, syntax.Perl)
	var re *regexp.Regexp
	if err == nil {
		re, err = regexp.Compile(search)
	}
	if err != nil {
		return set{}, nil, fmt.Errorf("stream expression: the search %s at offset %d is not a valid regular expression (RE2 syntax): %v", strconv.Quote(search), at, err)
	}
	if hasAssertion(tree) {
		off, what := assertionAt(search)
		if off < 0 {
			off, what = 0, "an anchor"
		}
		return set{}, nil, fmt.Errorf("stream expression: the search %s at offset %d uses %s at offset %d: the stream is not line- or buffer-oriented, so ^, $, \\A, \\z, \\b and \\B cannot be used (escape ^ or $ as \\^ or \\$ to match the character itself)", strconv.Quote(search), at, what, at+off)
	}
	return set{search: search, re: re, lit: literal(re)}, tree, nil
}

// literal returns the text re matches when that is one fixed string, so
// that the commonest expressions (@http://@https://@) skip the regexp
// engine. A literal holding U+FFFD is left to the engine, which also
// matches it against invalid UTF-8.
func literal(re *regexp.Regexp) []byte {
	prefix, complete := re.LiteralPrefix()
	if !complete || prefix == "" || strings.ContainsRune(prefix, utf8.RuneError) {
		return nil
	}
	return []byte(prefix)
}

// combine builds the alternation of all sets. Each set is wrapped in one
// capture group; the groups a set has of its own follow its wrapper, so
// the wrapper of a set comes after all groups of the sets before it. The
// parsed trees are printed rather than the source text so that a search
// ending inside \Q... cannot swallow the parentheses around it, and group
// names are dropped so that two sets may use the same name.
func (e *Expr) combine(trees []*syntax.Regexp) error {
	var b strings.Builder
	group := 1
	for i, t := range trees {
		e.sets[i].group = group
		group += 1 + e.sets[i].re.NumSubexp()
		if i > 0 {
			b.WriteByte('|')
		}
		unname(t)
		b.WriteByte('(')
		b.WriteString(t.String())
		b.WriteByte(')')
	}
	all, err := regexp.Compile(b.String())
	if err != nil {
		return fmt.Errorf("stream expression: cannot combine the sets into one regular expression: %v", err)
	}
	if all.NumSubexp() != group-1 {
		return fmt.Errorf("stream expression: combining the sets gave %d groups, want %d", all.NumSubexp(), group-1)
	}
	e.all = all
	return nil
}

// findAll returns the leftmost match in b of the alternation of all sets
// and the set that made it, or -1s.
func (e *Expr) findAll(b []byte) (start, end, set int) {
	if e.all == nil {
		start, end = e.sets[0].find(b)
		return start, end, 0
	}
	loc := e.all.FindSubmatchIndex(b)
	if loc == nil {
		return -1, -1, -1
	}
	for i := range e.sets {
		if loc[2*e.sets[i].group] >= 0 {
			return loc[0], loc[1], i
		}
	}
	// Not reached: one of the alternatives takes part in every match.
	return loc[0], loc[1], len(e.sets) - 1
}

// find returns the leftmost match of this set alone in b, or -1s.
func (st *set) find(b []byte) (start, end int) {
	if st.lit != nil {
		i := bytes.Index(b, st.lit)
		if i < 0 {
			return -1, -1
		}
		return i, i + len(st.lit)
	}
	loc := st.re.FindIndex(b)
	if loc == nil {
		return -1, -1
	}
	return loc[0], loc[1]
}

func unname(t *syntax.Regexp) {
	if t.Op == syntax.OpCapture {
		t.Name = ""
	}
	for _, s := range t.Sub {
		unname(s)
	}
}

// hasAssertion reports whether t holds an empty-width assertion, whose
// truth would depend on where the stream was split.
func hasAssertion(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range t.Sub {
		if hasAssertion(s) {
			return true
		}
	}
	return false
}

// assertionAt finds the first assertion in the text of a search: ^ or $
// outside a bracket expression and not escaped, or \A, \z, \b, \B. It
// returns -1 when it finds none.
func assertionAt(search string) (int, string) {
	inClass := false
	for i := 0; i < len(search); i++ {
		c := search[i]
		switch {
		case c == '\\' && i+1 < len(search):
			n := search[i+1]
			if n == 'Q' {
				end := strings.Index(search[i+2:], `\E`)
				if end < 0 {
					return -1, ""
				}
				i += 2 + end + 1
				continue
			}
			if !inClass && strings.IndexByte("AzbB", n) >= 0 {
				return i, search[i : i+2]
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			} else if c == '[' && i+1 < len(search) && search[i+1] == ':' {
				if end := strings.Index(search[i+2:], ":]"); end >= 0 {
					i += 2 + end + 1
				}
			}
		case c == '[':
			inClass = true
			// A ']' first in the class, after an optional '^', is literal.
			if i+1 < len(search) && search[i+1] == '^' {
				i++
			}
			if i+1 < len(search) && search[i+1] == ']' {
				i++
			}
		case c == '^' || c == '$':
			return i, string(c)
		}
	}
	return -1, ""
}

// maxLen returns the longest string, in bytes, t can match, or unbounded.
// It errs on the long side: the filter may hold back a little more than
// needed, never less.
func maxLen(t *syntax.Regexp) int {
	switch t.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range t.Rune {
			if t.Flags&syntax.FoldCase != 0 {
				n += foldLen(r)
			} else {
				n += runeBytes(r)
			}
		}
		return n
	case syntax.OpCharClass:
		n := 0
		for i := 1; i < len(t.Rune); i += 2 {
			n = maxOf(n, runeBytes(t.Rune[i]))
		}
		return n
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(t.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxLen(t.Sub[0]) == 0 {
			return 0
		}
		return unbounded
	case syntax.OpRepeat:
		n := maxLen(t.Sub[0])
		if n == 0 {
			return 0
		}
		if n == unbounded || t.Max < 0 {
			return unbounded
		}
		return mulLen(n, t.Max)
	case syntax.OpConcat:
		n := 0
		for _, s := range t.Sub {
			m := maxLen(s)
			if m == unbounded {
				return unbounded
			}
			n = addLen(n, m)
			if n == unbounded {
				return unbounded
			}
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range t.Sub {
			m := maxLen(s)
			if m == unbounded {
				return unbounded
			}
			n = maxOf(n, m)
		}
		return n
	}
	return unbounded
}

// maxOf is max with unbounded as the largest value.
func maxOf(a, b int) int {
	if a == unbounded || b == unbounded {
		return unbounded
	}
	return max(a, b)
}

func addLen(a, b int) int {
	if a+b > lengthLimit {
		return unbounded
	}
	return a + b
}

func mulLen(a, n int) int {
	if n != 0 && a > lengthLimit/n {
		return unbounded
	}
	return a * n
}

// runeBytes is the length of r's UTF-8 encoding, counting values that
// cannot be encoded as the three bytes of U+FFFD.
func runeBytes(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// foldLen is the longest encoding among the case variants of r: under
// (?i) the letter k also matches the three-byte Kelvin sign.
func foldLen(r rune) int {
	n := runeBytes(r)
	f := unicode.SimpleFold(r)
	for i := 0; f != r && i < 8; i++ {
		n = max(n, runeBytes(f))
		f = unicode.SimpleFold(f)
	}
	return n
}

// holdFrom returns the first position in b[from:view] where a match could
// begin: the bytes there start with a set's prefix, or are the start of
// one that more data may complete. view when there is none. Only for a
// prefixed expression.
func (e *Expr) holdFrom(b []byte, from, view int) int {
	for i := from; i < view; {
		next := view
		for k := range e.sets {
			p := e.sets[k].prefix
			j := bytes.IndexByte(b[i:view], p[0])
			if j < 0 {
				continue
			}
			j += i
			if tail := b[j:view]; bytes.HasPrefix(tail, p) || len(tail) < len(p) && bytes.HasPrefix(p, tail) {
				if j == i {
					return i
				}
			}
			next = min(next, j)
		}
		if next == i {
			i++
		} else {
			i = next
		}
	}
	return view
}
