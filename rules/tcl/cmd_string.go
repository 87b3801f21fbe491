package tcl

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

func registerStrings(t *Commands) {
	t.Register("string", cmdString)
}

// chars gives character-indexed access to a string, avoiding a rune slice
// for ASCII text.
type chars struct {
	s     string
	r     []rune
	ascii bool
}

func newChars(s string) chars {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return chars{s: s, r: []rune(s)}
		}
	}
	return chars{s: s, ascii: true}
}

func (c chars) n() int {
	if c.ascii {
		return len(c.s)
	}
	return len(c.r)
}

func (c chars) sub(a, b int) string {
	if c.ascii {
		return c.s[a:b]
	}
	return string(c.r[a:b])
}

func (c chars) at(i int) rune {
	if c.ascii {
		return rune(c.s[i])
	}
	return c.r[i]
}

const stringUsage = "must be bytelength, cat, compare, equal, first, index, is, last, length, map, match, range, repeat, replace, reverse, tolower, totitle, toupper, trim, trimleft, trimright, wordend, or wordstart"

func cmdString(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("string subcommand ?arg ...?")
	}
	sub := args[1].String()
	a := args[2:]
	need := func(lo, hi int, usage string) error {
		if len(a) < lo || (hi >= 0 && len(a) > hi) {
			return wrongArgs("string " + sub + " " + usage)
		}
		return nil
	}
	switch sub {
	case "length":
		if err := need(1, 1, "string"); err != nil {
			return Empty, err
		}
		return Int(int64(utf8.RuneCountInString(a[0].String()))), nil
	case "bytelength":
		if err := need(1, 1, "string"); err != nil {
			return Empty, err
		}
		return Int(int64(len(a[0].String()))), nil
	case "index":
		if err := need(2, 2, "string charIndex"); err != nil {
			return Empty, err
		}
		c := newChars(a[0].String())
		i, err := index(a[1], c.n())
		if err != nil {
			return Empty, err
		}
		if i < 0 || i >= c.n() {
			return Empty, nil
		}
		return Str(c.sub(i, i+1)), nil
	case "range":
		if err := need(3, 3, "string first last"); err != nil {
			return Empty, err
		}
		c := newChars(a[0].String())
		i, j, err := indexPair(a[1], a[2], c.n())
		if err != nil {
			return Empty, err
		}
		i = max(i, 0)
		j = min(j, c.n()-1)
		if i > j {
			return Empty, nil
		}
		return Str(c.sub(i, j+1)), nil
	case "first", "last":
		if err := need(2, 3, "needleString haystackString ?startIndex?"); err != nil {
			return Empty, err
		}
		needle := newChars(a[0].String())
		hay := newChars(a[1].String())
		if needle.n() == 0 {
			return Int(-1), nil
		}
		if sub == "first" {
			start := 0
			if len(a) == 3 {
				s, err := index(a[2], hay.n())
				if err != nil {
					return Empty, err
				}
				start = max(s, 0)
			}
			for i := start; i <= hay.n()-needle.n(); i++ {
				if hay.sub(i, i+needle.n()) == needle.s {
					return Int(int64(i)), nil
				}
			}
			return Int(-1), nil
		}
		last := hay.n() - 1
		if len(a) == 3 {
			s, err := index(a[2], hay.n())
			if err != nil {
				return Empty, err
			}
			last = min(s, last)
		}
		for i := min(last, hay.n()-needle.n()); i >= 0; i-- {
			if hay.sub(i, i+needle.n()) == needle.s {
				return Int(int64(i)), nil
			}
		}
		return Int(-1), nil
	case "match":
		nocase := false
		if len(a) == 3 && a[0].String() == "-nocase" {
			nocase = true
			a = a[1:]
		}
		if len(a) != 2 {
			return Empty, wrongArgs("string match ?-nocase? pattern string")
		}
		return Bool(GlobMatch(a[0].String(), a[1].String(), nocase)), nil
	case "equal", "compare":
		nocase := false
		length := -1
		for len(a) > 2 {
			switch a[0].String() {
			case "-nocase":
				nocase = true
				a = a[1:]
			case "-length":
				if len(a) < 4 {
					return Empty, wrongArgs("string " + sub + " ?-nocase? ?-length int? string1 string2")
				}
				n, err := asInt(a[1])
				if err != nil {
					return Empty, err
				}
				length = n
				a = a[2:]
			default:
				return Empty, errorf("bad option %s: must be -nocase or -length", q(a[0].String()))
			}
		}
		if len(a) != 2 {
			return Empty, wrongArgs("string " + sub + " ?-nocase? ?-length int? string1 string2")
		}
		s1, s2 := a[0].String(), a[1].String()
		if length >= 0 {
			c1, c2 := newChars(s1), newChars(s2)
			s1 = c1.sub(0, min(length, c1.n()))
			s2 = c2.sub(0, min(length, c2.n()))
		}
		if nocase {
			s1, s2 = strings.ToLower(s1), strings.ToLower(s2)
		}
		c := strings.Compare(s1, s2)
		if sub == "equal" {
			return Bool(c == 0), nil
		}
		return Int(int64(c)), nil
	case "map":
		nocase := false
		if len(a) == 3 && a[0].String() == "-nocase" {
			nocase = true
			a = a[1:]
		}
		if len(a) != 2 {
			return Empty, wrongArgs("string map ?-nocase? charMap string")
		}
		m, err := AsList(a[0])
		if err != nil {
			return Empty, err
		}
		if len(m)%2 != 0 {
			return Empty, errorf("char map list unbalanced")
		}
		return Str(stringMap(m, a[1].String(), nocase)), nil
	case "tolower", "toupper", "totitle":
		if err := need(1, 3, "string ?first? ?last?"); err != nil {
			return Empty, err
		}
		s := a[0].String()
		if len(a) == 1 && sub != "totitle" {
			// The whole string, the usual form: no character index
			// needed, and strings.ToLower returns an already lower-case
			// ASCII string as it is, without allocating.
			if sub == "tolower" {
				return Str(strings.ToLower(s)), nil
			}
			return Str(strings.ToUpper(s)), nil
		}
		c := newChars(s)
		i, j := 0, c.n()-1
		if len(a) > 1 {
			var err error
			if i, err = index(a[1], c.n()); err != nil {
				return Empty, err
			}
			j = i
			if len(a) > 2 {
				if j, err = index(a[2], c.n()); err != nil {
					return Empty, err
				}
			}
		}
		i = max(i, 0)
		j = min(j, c.n()-1)
		if i > j {
			return Str(s), nil
		}
		mid := c.sub(i, j+1)
		switch sub {
		case "tolower":
			mid = strings.ToLower(mid)
		case "toupper":
			mid = strings.ToUpper(mid)
		default:
			r, size := utf8.DecodeRuneInString(mid)
			mid = string(unicode.ToTitle(r)) + strings.ToLower(mid[size:])
		}
		return Str(c.sub(0, i) + mid + c.sub(j+1, c.n())), nil
	case "trim", "trimleft", "trimright":
		if err := need(1, 2, "string ?chars?"); err != nil {
			return Empty, err
		}
		set := " \t\n\r\v\f\x00\u00a0\u2028\u2029\u3000\ufeff\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u202f\u205f\u0085"
		if len(a) == 2 {
			set = a[1].String()
		}
		s := a[0].String()
		switch sub {
		case "trim":
			s = strings.Trim(s, set)
		case "trimleft":
			s = strings.TrimLeft(s, set)
		default:
			s = strings.TrimRight(s, set)
		}
		return Str(s), nil
	case "repeat":
		if err := need(2, 2, "string count"); err != nil {
			return Empty, err
		}
		n, err := asInt(a[1])
		if err != nil {
			return Empty, err
		}
		if n <= 0 {
			return Empty, nil
		}
		s := a[0].String()
		if len(s) > 0 && n > maxValueLen/len(s) {
			return Empty, tooLarge()
		}
		return Str(strings.Repeat(s, n)), nil
	case "replace":
		if err := need(3, 4, "string first last ?string?"); err != nil {
			return Empty, err
		}
		c := newChars(a[0].String())
		i, j, err := indexPair(a[1], a[2], c.n())
		if err != nil {
			return Empty, err
		}
		if j < i || i >= c.n() || j < 0 {
			return a[0], nil
		}
		i = max(i, 0)
		j = min(j, c.n()-1)
		repl := ""
		if len(a) == 4 {
			repl = a[3].String()
		}
		return Str(c.sub(0, i) + repl + c.sub(j+1, c.n())), nil
	case "reverse":
		if err := need(1, 1, "string"); err != nil {
			return Empty, err
		}
		r := []rune(a[0].String())
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return Str(string(r)), nil
	case "cat":
		var b strings.Builder
		for _, v := range a {
			b.WriteString(v.String())
		}
		return Str(b.String()), nil
	case "wordstart", "wordend":
		if err := need(2, 2, "string index"); err != nil {
			return Empty, err
		}
		c := newChars(a[0].String())
		i, err := index(a[1], c.n())
		if err != nil {
			return Empty, err
		}
		if sub == "wordstart" {
			if i >= c.n() {
				i = c.n() - 1
			}
			if i < 0 {
				return Int(0), nil
			}
			if !isWordChar(c.at(i)) {
				return Int(int64(i)), nil
			}
			for i > 0 && isWordChar(c.at(i-1)) {
				i--
			}
			return Int(int64(i)), nil
		}
		if i < 0 {
			i = 0
		}
		if i >= c.n() {
			return Int(int64(c.n())), nil
		}
		if !isWordChar(c.at(i)) {
			return Int(int64(i + 1)), nil
		}
		for i < c.n() && isWordChar(c.at(i)) {
			i++
		}
		return Int(int64(i)), nil
	case "is":
		return stringIs(in, a)
	}
	return Empty, errorf("unknown or ambiguous subcommand %s: %s", q(sub), stringUsage)
}

func isWordChar(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func stringMap(m []Value, s string, nocase bool) string {
	keys := make([]string, len(m)/2)
	for i := range keys {
		keys[i] = m[2*i].String()
		if nocase {
			keys[i] = strings.ToLower(keys[i])
		}
	}
	cmp := s
	if nocase {
		cmp = strings.ToLower(s)
		if len(cmp) != len(s) {
			cmp = s
		}
	}
	var b strings.Builder
	i := 0
outer:
	for i < len(s) {
		for k, key := range keys {
			if key != "" && strings.HasPrefix(cmp[i:], key) {
				b.WriteString(m[2*k+1].String())
				i += len(key)
				continue outer
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

func stringIs(in *Interp, a []Value) (Value, error) {
	usage := "string is class ?-strict? ?-failindex var? str"
	if len(a) < 2 {
		return Empty, wrongArgs(usage)
	}
	class := a[0].String()
	strict := false
	failVar := ""
	opts := a[1 : len(a)-1]
	for i := 0; i < len(opts); i++ {
		switch opts[i].String() {
		case "-strict":
			strict = true
		case "-failindex":
			i++
			if i >= len(opts) {
				return Empty, wrongArgs(usage)
			}
			failVar = opts[i].String()
		default:
			return Empty, errorf("bad option %s: must be -strict or -failindex", q(opts[i].String()))
		}
	}
	s := a[len(a)-1].String()
	fail := func(at int) (Value, error) {
		if failVar != "" {
			in.SetVar(failVar, Int(int64(at)))
		}
		return Int(0), nil
	}
	if s == "" {
		if strict {
			return fail(0)
		}
		return Int(1), nil
	}
	var pred func(rune) bool
	switch class {
	case "alnum":
		pred = func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	case "alpha":
		pred = unicode.IsLetter
	case "ascii":
		pred = func(r rune) bool { return r < 0x80 }
	case "control":
		pred = unicode.IsControl
	case "digit":
		pred = unicode.IsDigit
	case "graph":
		pred = func(r rune) bool { return unicode.IsGraphic(r) && !unicode.IsSpace(r) }
	case "lower":
		pred = unicode.IsLower
	case "upper":
		pred = unicode.IsUpper
	case "print":
		pred = unicode.IsPrint
	case "punct":
		pred = unicode.IsPunct
	case "space":
		pred = unicode.IsSpace
	case "wordchar":
		pred = isWordChar
	case "xdigit":
		pred = func(r rune) bool { return r < 0x80 && digitVal(byte(r)) < 16 }
	case "integer", "wide", "entier":
		n, ok := parseInteger(trimSpace(s))
		if !ok {
			return fail(0)
		}
		switch {
		case class == "integer" && (n.kind == kBig || n.i > math.MaxInt32 || n.i < math.MinInt32):
			return fail(0)
		case class == "wide" && n.kind == kBig:
			return fail(0)
		}
		return Int(1), nil
	case "double":
		if _, ok := parseNumber(s); !ok {
			return fail(0)
		}
		return Int(1), nil
	case "boolean", "true", "false":
		b, ok := parseBool(s)
		if !ok || (class == "true" && !b) || (class == "false" && b) {
			return fail(0)
		}
		return Int(1), nil
	case "list":
		if _, err := parseList(s); err != nil {
			return fail(0)
		}
		return Int(1), nil
	default:
		return Empty, errorf("bad class %s: must be alnum, alpha, ascii, control, boolean, digit, double, entier, false, graph, integer, list, lower, print, punct, space, true, upper, wide, wordchar, or xdigit", q(class))
	}
	i := 0
	for _, r := range s {
		if !pred(r) {
			return fail(i)
		}
		i++
	}
	return Int(1), nil
}

// GlobMatch is Tcl's string match: * ? [chars] and backslash escapes.
func GlobMatch(pattern, s string, nocase bool) bool {
	if nocase {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	return globMatch(pattern, s, 0)
}

func globMatch(p, s string, depth int) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			if depth > 64 {
				return false
			}
			for i := 0; i <= len(s); i++ {
				if i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
					continue
				}
				if globMatch(p, s[i:], depth+1) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			_, n := utf8.DecodeRuneInString(s)
			p, s = p[1:], s[n:]
		case '[':
			if s == "" {
				return false
			}
			r, n := utf8.DecodeRuneInString(s)
			s = s[n:]
			p = p[1:]
			matched := false
			for {
				if p == "" {
					return false
				}
				if p[0] == ']' {
					p = p[1:]
					break
				}
				lo, ln := utf8.DecodeRuneInString(p)
				if p[0] == '\\' && len(p) > 1 {
					lo, ln = utf8.DecodeRuneInString(p[1:])
					ln++
				}
				p = p[ln:]
				hi := lo
				if len(p) > 1 && p[0] == '-' && p[1] != ']' {
					h, hn := utf8.DecodeRuneInString(p[1:])
					hi = h
					p = p[1+hn:]
				}
				if lo > hi {
					lo, hi = hi, lo
				}
				if r >= lo && r <= hi {
					matched = true
				}
			}
			if !matched {
				return false
			}
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if s == "" {
				return false
			}
			pr, pn := utf8.DecodeRuneInString(p)
			sr, sn := utf8.DecodeRuneInString(s)
			if pr != sr {
				return false
			}
			p, s = p[pn:], s[sn:]
		}
	}
	return s == ""
}
