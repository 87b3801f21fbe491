package grammar

import "strings"

// IsBare reports whether s reads back as the same single word without
// quotes, so the printer can write names and values the way BIG-IP does:
// bare when it can, quoted only when it must.
func IsBare(s string) bool {
	if s == "" || s[0] == '#' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) || s[i] == '\\' {
			return false
		}
	}
	return true
}

// Quote returns s as one word of configuration text: bare when IsBare,
// otherwise in double quotes. Inside the quotes only what Parse would
// otherwise misread is escaped: every `"`, and a backslash that stands
// before `"`, before another backslash or at the end. Any other backslash
// is written as is, so a monitor send string holding a literal `\r\n` is
// written `"GET / HTTP/1.1\r\nHost: x\r\n\r\n"` exactly as BIG-IP saves it.
// Newlines are kept literally, as in saved files. Parsing the result always
// gives back s.
func Quote(s string) string {
	if IsBare(s) {
		return s
	}
	return quoteAlways(s)
}

// QuoteAlways is Quote without the bare shortcut, for values BIG-IP
// always writes quoted (sys db values).
func QuoteAlways(s string) string { return quoteAlways(s) }

// quoteAlways is Quote without the bare shortcut, for words that were
// quoted in their source and should stay so.
func quoteAlways(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\' && (i+1 == len(s) || s[i+1] == '"' || s[i+1] == '\\'):
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
