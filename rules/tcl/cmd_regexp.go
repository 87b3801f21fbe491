package tcl

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

func registerRegexp(t *Commands) {
	t.Register("regexp", cmdRegexp)
	t.Register("regsub", cmdRegsub)
}

type reKey struct {
	pat    string
	nocase bool
	line   int
}

var (
	reMu    sync.Mutex
	reCache = map[reKey]*regexp.Regexp{}
)

func compileRegexp(pat string, nocase bool) (*regexp.Regexp, error) {
	return compileRegexpLine(pat, nocase, 0)
}

// compileRegexpLine translates Tcl's advanced regular expressions to Go's
// RE2 syntax. line: 0 none, 1 -line, 2 -lineanchor, 3 -linestop.
func compileRegexpLine(pat string, nocase bool, line int) (*regexp.Regexp, error) {
	k := reKey{pat, nocase, line}
	reMu.Lock()
	re := reCache[k]
	reMu.Unlock()
	if re != nil {
		return re, nil
	}
	tr, lazy, err := translateRE(pat)
	if err != nil {
		return nil, err
	}
	flags := ""
	if nocase {
		flags += "i"
	}
	switch line {
	case 0:
		flags += "s"
	case 1:
		flags += "m"
	case 2:
		flags += "ms"
	}
	if flags != "" {
		tr = "(?" + flags + ")" + tr
	}
	re, err = regexp.Compile(tr)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return nil, errorf("couldn't compile regular expression pattern: %s", msg)
	}
	if !lazy {
		re.Longest()
	}
	reMu.Lock()
	if len(reCache) > 1000 {
		clear(reCache)
	}
	reCache[k] = re
	reMu.Unlock()
	return re, nil
}

// translateRE rewrites the Tcl-only escapes; lazy reports non-greedy
// quantifiers, which switch off leftmost-longest matching as in Tcl.
func translateRE(p string) (string, bool, error) {
	var b strings.Builder
	lazy := false
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if inClass {
			if c == ']' {
				inClass = false
			}
			if c == '\\' && i+1 < len(p) {
				b.WriteByte(c)
				i++
				b.WriteByte(p[i])
				continue
			}
			if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				j := strings.Index(p[i:], ":]")
				if j > 0 {
					b.WriteString(p[i : i+j+2])
					i += j + 1
					continue
				}
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case '\\':
			if i+1 >= len(p) {
				return "", false, errorf("couldn't compile regular expression pattern: invalid escape \\ sequence")
			}
			i++
			switch d := p[i]; {
			case d == 'm' || d == 'M' || d == 'y':
				b.WriteString(`\b`)
			case d == 'Y':
				b.WriteString(`\B`)
			case d == 'Z':
				b.WriteString(`\z`)
			case d >= '1' && d <= '9':
				return "", false, errorf("couldn't compile regular expression pattern: back references are not supported")
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
			continue
		case '?', '*', '+', '}':
			if i+1 < len(p) && p[i+1] == '?' && !(c == '?' && i > 0 && p[i-1] == '(') {
				lazy = true
			}
		case '(':
			if strings.HasPrefix(p[i:], "(?=") || strings.HasPrefix(p[i:], "(?!") {
				return "", false, errorf("couldn't compile regular expression pattern: lookahead constraints are not supported")
			}
		}
		b.WriteByte(c)
	}
	return b.String(), lazy, nil
}

// startAnchored reports a pattern that can only match at the start of the
// string; matching from an offset must not treat the offset as the start.
func startAnchored(pat string, line int) bool {
	return strings.HasPrefix(pat, "^") && (line == 0 || line == 3)
}

// runeIndex converts a byte offset in s to a character index.
func runeIndex(s string, off int) int {
	for i := 0; i < off && i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s[:off])
		}
	}
	return off
}

func byteOffset(s string, chars int) int {
	i := 0
	for n := 0; n < chars && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

type reOpts struct {
	nocase, indices, all, inline bool
	line                         int
	start                        int
}

func parseREOpts(args []Value, sub bool) (reOpts, []Value, error) {
	var o reOpts
	i := 1
	for ; i < len(args); i++ {
		s := args[i].String()
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch s {
		case "-nocase":
			o.nocase = true
		case "-indices":
			o.indices = true
		case "-all":
			o.all = true
		case "-inline":
			o.inline = true
		case "-line":
			o.line = 1
		case "-lineanchor":
			o.line = 2
		case "-linestop":
			o.line = 3
		case "-expanded", "-about":
		case "-start":
			i++
			if i >= len(args) {
				return o, nil, errorf("no value given for \"-start\" option")
			}
			n, err := index(args[i], 0)
			if err != nil {
				return o, nil, err
			}
			o.start = max(n, 0)
		case "--":
			i++
			return o, args[i:], nil
		default:
			if sub {
				return o, nil, errorf("bad option %s: must be -all, -command, -expanded, -line, -linestop, -lineanchor, -nocase, -start, or --", q(s))
			}
			return o, nil, errorf("bad option %s: must be -about, -all, -expanded, -indices, -inline, -line, -linestop, -lineanchor, -nocase, -start, or --", q(s))
		}
	}
	return o, args[i:], nil
}

func cmdRegexp(in *Interp, args []Value) (Value, error) {
	o, rest, err := parseREOpts(args, false)
	if err != nil {
		return Empty, err
	}
	if len(rest) < 2 {
		return Empty, wrongArgs("regexp ?-option ...? exp string ?matchVar? ?subMatchVar ...?")
	}
	if o.inline && len(rest) > 2 {
		return Empty, errorf("regexp match variables not allowed when using -inline")
	}
	re, err := compileRegexpLine(rest[0].String(), o.nocase, o.line)
	if err != nil {
		return Empty, err
	}
	s := rest[1].String()
	startB := byteOffset(s, o.start)
	vars := rest[2:]
	var inline []Value
	count := 0
	var last []int
	pos := startB
	anchored := startAnchored(rest[0].String(), o.line)
	for pos <= len(s) {
		if anchored && pos > 0 {
			break
		}
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		count++
		last = m
		if o.inline {
			for k := 0; k < len(m)/2; k++ {
				inline = append(inline, matchValue(s, m, k, o.indices))
			}
		}
		if !o.all {
			break
		}
		if m[1] == m[0] {
			if m[1] >= len(s) {
				break
			}
			_, size := utf8.DecodeRuneInString(s[m[1]:])
			pos = m[1] + size
		} else {
			pos = m[1]
		}
	}
	if o.inline {
		return List(inline...), nil
	}
	for k, vn := range vars {
		v := Empty
		if last != nil {
			if k < len(last)/2 {
				v = matchValue(s, last, k, o.indices)
			} else if o.indices {
				v = Str("-1 -1")
			}
		} else if o.indices {
			v = Str("-1 -1")
		}
		if last == nil && !o.indices {
			v = Empty
		}
		if last == nil {
			continue
		}
		if _, err := in.SetVar(vn.String(), v); err != nil {
			return Empty, err
		}
	}
	return Int(int64(count)), nil
}

func matchValue(s string, m []int, k int, indices bool) Value {
	a, b := m[2*k], m[2*k+1]
	if indices {
		if a < 0 {
			return List(Int(-1), Int(-1))
		}
		return List(Int(int64(runeIndex(s, a))), Int(int64(runeIndex(s, b)-1)))
	}
	if a < 0 {
		return Empty
	}
	return Str(s[a:b])
}

func cmdRegsub(in *Interp, args []Value) (Value, error) {
	o, rest, err := parseREOpts(args, true)
	if err != nil {
		return Empty, err
	}
	if len(rest) != 3 && len(rest) != 4 {
		return Empty, wrongArgs("regsub ?-option ...? exp string subSpec ?varName?")
	}
	re, err := compileRegexpLine(rest[0].String(), o.nocase, o.line)
	if err != nil {
		return Empty, err
	}
	s := rest[1].String()
	spec := rest[2].String()
	var b strings.Builder
	pos := byteOffset(s, o.start)
	b.WriteString(s[:pos])
	count := 0
	anchored := startAnchored(rest[0].String(), o.line)
	for pos <= len(s) {
		if anchored && pos > 0 {
			break
		}
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		count++
		b.WriteString(s[pos:m[0]])
		for i := 0; i < len(spec); i++ {
			c := spec[i]
			grp := -1
			if c == '&' {
				grp = 0
			} else if c == '\\' && i+1 < len(spec) {
				d := spec[i+1]
				if d >= '0' && d <= '9' {
					grp = int(d - '0')
					i++
				} else if d == '\\' || d == '&' {
					b.WriteByte(d)
					i++
					continue
				}
			}
			if grp >= 0 {
				if 2*grp+1 < len(m) && m[2*grp] >= 0 {
					b.WriteString(s[m[2*grp]:m[2*grp+1]])
				}
				continue
			}
			b.WriteByte(c)
		}
		if m[1] == m[0] {
			if m[1] < len(s) {
				_, size := utf8.DecodeRuneInString(s[m[1]:])
				b.WriteString(s[m[1] : m[1]+size])
				pos = m[1] + size
			} else {
				pos = len(s) + 1
			}
		} else {
			pos = m[1]
		}
		if !o.all {
			break
		}
	}
	if pos <= len(s) {
		b.WriteString(s[pos:])
	}
	res := Str(b.String())
	if len(rest) == 4 {
		if _, err := in.SetVar(rest[3].String(), res); err != nil {
			return Empty, err
		}
		return Int(int64(count)), nil
	}
	return res, nil
}

func cmdSwitch(in *Interp, args []Value) (Value, error) {
	mode := "exact"
	nocase := false
	matchVar, indexVar := "", ""
	// As in Tcl, the last two words are never options, so a string that
	// starts with "-" is matched, not read as an option.
	i := 1
	for ; i < len(args)-2; i++ {
		s := args[i].String()
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch s {
		case "-exact", "-glob", "-regexp":
			mode = s[1:]
		case "-nocase":
			nocase = true
		case "-matchvar", "-indexvar":
			i++
			if i >= len(args)-2 {
				return Empty, errorf("missing variable name argument to %s option", s)
			}
			if s == "-matchvar" {
				matchVar = args[i].String()
			} else {
				indexVar = args[i].String()
			}
		case "--":
			i++
			goto body
		default:
			return Empty, errorf("bad option %s: must be -exact, -glob, -indexvar, -matchvar, -nocase, -regexp, or --", q(s))
		}
	}
body:
	if len(args)-i < 2 {
		return Empty, wrongArgs("switch ?-option ...? string ?pattern body ...? ?default body?")
	}
	str := args[i].String()
	i++
	var pb []Value
	if len(args)-i == 1 {
		l, err := AsList(args[i])
		if err != nil {
			return Empty, err
		}
		pb = l
	} else {
		pb = args[i:]
	}
	if len(pb) == 0 {
		return Empty, wrongArgs("switch ?-option ...? string {?pattern body ...? ?default body?}")
	}
	if len(pb)%2 != 0 {
		return Empty, errorf("extra switch pattern with no body")
	}
	if pb[len(pb)-1].String() == "-" {
		return Empty, errorf("no body specified for pattern %s", q(pb[len(pb)-2].String()))
	}
	for k := 0; k < len(pb); k += 2 {
		pat := pb[k].String()
		matched := false
		var m []int
		if k == len(pb)-2 && pat == "default" {
			matched = true
		} else {
			switch mode {
			case "exact":
				if nocase {
					matched = strings.EqualFold(pat, str)
				} else {
					matched = pat == str
				}
			case "glob":
				matched = GlobMatch(pat, str, nocase)
			case "regexp":
				re, err := compileRegexp(pat, nocase)
				if err != nil {
					return Empty, err
				}
				m = re.FindStringSubmatchIndex(str)
				matched = m != nil
			}
		}
		if !matched {
			continue
		}
		if matchVar != "" || indexVar != "" {
			var mv, iv []Value
			for g := 0; g < len(m)/2; g++ {
				mv = append(mv, matchValue(str, m, g, false))
				iv = append(iv, matchValue(str, m, g, true))
			}
			if matchVar != "" {
				in.SetVar(matchVar, List(mv...))
			}
			if indexVar != "" {
				in.SetVar(indexVar, List(iv...))
			}
		}
		for k+1 < len(pb) && pb[k+1].String() == "-" {
			k += 2
		}
		return in.EvalValue(pb[k+1])
	}
	return Empty, nil
}
