package tcl

import (
	"strings"
	"unicode/utf8"
)

// AsList reads v as a Tcl list, reusing the cached elements when v was built
// as a list.
func AsList(v Value) ([]Value, error) {
	if v.kind == kList {
		return v.rep.(*listRep).elems, nil
	}
	return parseList(v.String())
}

func isListSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseList splits a string into list elements with Tcl's rules.
func parseList(s string) ([]Value, error) {
	var out []Value
	i := 0
	for {
		for i < len(s) && isListSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		switch s[i] {
		case '{':
			depth := 1
			j := i + 1
			hasBS := false
			for j < len(s) && depth > 0 {
				switch s[j] {
				case '{':
					depth++
				case '}':
					depth--
				case '\\':
					hasBS = true
					j++
				}
				j++
			}
			if depth > 0 {
				return nil, errorf("unmatched open brace in list")
			}
			if j < len(s) && !isListSpace(s[j]) {
				return nil, errorf("list element in braces followed by %s instead of space", q(s[j:j+1]+followText(s, j)))
			}
			elem := s[i+1 : j-1]
			_ = hasBS
			out = append(out, Str(elem))
			i = j
		case '"':
			j := i + 1
			simple := true
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					simple = false
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, errorf("unmatched open quote in list")
			}
			if j+1 < len(s) && !isListSpace(s[j+1]) {
				return nil, errorf("list element in quotes followed by %s instead of space", q(s[j+1:j+2]+followText(s, j+1)))
			}
			elem := s[i+1 : j]
			if !simple {
				elem = substBackslashes(elem)
			}
			out = append(out, Str(elem))
			i = j + 1
		default:
			j := i
			simple := true
			for j < len(s) && !isListSpace(s[j]) {
				if s[j] == '\\' {
					simple = false
					j++
				}
				j++
			}
			if j > len(s) {
				j = len(s)
			}
			elem := s[i:j]
			if !simple {
				elem = substBackslashes(elem)
			}
			out = append(out, Str(elem))
			i = j
		}
	}
}

// followText reproduces the rest of Tcl's message, which quotes the next
// characters up to white space (at most a few).
func followText(s string, j int) string {
	k := j + 1
	for k < len(s) && k < j+20 && !isListSpace(s[k]) {
		k++
	}
	return s[j+1 : k]
}

// formatList joins elements into a canonical Tcl list string.
func formatList(elems []Value) string {
	if len(elems) == 0 {
		return ""
	}
	var b strings.Builder
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(' ')
		}
		appendElement(&b, e.String(), i == 0)
	}
	return b.String()
}

// FormatList quotes strings as list elements, for commands that build lists
// from Go strings.
func FormatList(elems ...string) string {
	var b strings.Builder
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(' ')
		}
		appendElement(&b, e, i == 0)
	}
	return b.String()
}

// Quoting modes chosen by scanElement, after Tcl's TclScanElement.
const (
	quoteNone = iota
	quoteBrace
	quoteEscape
)

func scanElement(s string, first bool) int {
	if s == "" {
		return quoteBrace
	}
	forbidNone, requireEscape, preferEscape, preferBrace := false, false, false, false
	braceCount := 0
	if s[0] == '{' || s[0] == '"' {
		forbidNone, preferBrace = true, true
	} else if s[0] == '#' && first {
		forbidNone, preferBrace = true, true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			braceCount++
		case '}':
			braceCount--
			if braceCount < 0 {
				requireEscape = true
			}
		case ']', '"':
			forbidNone, preferEscape = true, true
		case '[', '$', ';', ' ', '\f', '\n', '\r', '\t', '\v':
			forbidNone, preferBrace = true, true
		case '\\':
			if i+1 == len(s) || s[i+1] == '\n' {
				requireEscape = true
			} else {
				forbidNone, preferBrace = true, true
				i++
			}
		}
	}
	if braceCount != 0 {
		requireEscape = true
	}
	switch {
	case requireEscape:
		return quoteEscape
	case !forbidNone:
		return quoteNone
	case preferEscape && !preferBrace:
		return quoteEscape
	}
	return quoteBrace
}

func appendElement(b *strings.Builder, s string, first bool) {
	switch scanElement(s, first) {
	case quoteNone:
		b.WriteString(s)
	case quoteBrace:
		b.WriteByte('{')
		b.WriteString(s)
		b.WriteByte('}')
	default:
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch c {
			case ']', '[', '$', ';', ' ', '\\', '"', '{', '}':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\v':
				b.WriteString(`\v`)
			case '#':
				if i == 0 && first {
					b.WriteByte('\\')
				}
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
	}
}

// backslash decodes one backslash sequence at s[0]=='\\' and returns the
// replacement and the number of bytes consumed.
func backslash(s string) (string, int) {
	if len(s) < 2 {
		return "\\", 1
	}
	c := s[1]
	switch c {
	case 'a':
		return "\a", 2
	case 'b':
		return "\b", 2
	case 'f':
		return "\f", 2
	case 'n':
		return "\n", 2
	case 'r':
		return "\r", 2
	case 't':
		return "\t", 2
	case 'v':
		return "\v", 2
	case '\n':
		i := 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		return " ", i
	case 'x':
		v, n := hexDigits(s[2:], 2)
		if n == 0 {
			return "x", 2
		}
		return string(rune(v)), 2 + n
	case 'u':
		v, n := hexDigits(s[2:], 4)
		if n == 0 {
			return "u", 2
		}
		return string(rune(v)), 2 + n
	case 'U':
		v, n := hexDigits(s[2:], 8)
		if n == 0 {
			return "U", 2
		}
		if v > 0x10FFFF {
			// Tcl stops before the digit that would overflow
			for n > 0 && v > 0x10FFFF {
				v >>= 4
				n--
			}
		}
		return string(rune(v)), 2 + n
	}
	if c >= '0' && c <= '7' {
		v, n := 0, 0
		for n < 3 && 1+n < len(s) && s[1+n] >= '0' && s[1+n] <= '7' {
			v = v*8 + int(s[1+n]-'0')
			n++
		}
		return string(rune(v & 0xff)), 1 + n
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return s[1 : 1+size], 1 + size
}

func hexDigits(s string, max int) (int, int) {
	v, n := 0, 0
	for n < max && n < len(s) {
		d := digitVal(s[n])
		if d >= 16 {
			break
		}
		v = v*16 + d
		n++
	}
	return v, n
}

// substBackslashes replaces every backslash sequence in s.
func substBackslashes(s string) string {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		if s[i] == '\\' {
			r, n := backslash(s[i:])
			b.WriteString(r)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
