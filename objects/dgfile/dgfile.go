// Package dgfile reads the files behind external data groups (`sys file
// data-group`), in the format BIG-IP imports and writes them: one record
// per line, a key, optionally the separator (":=" unless the file object
// says otherwise) and a value, and a comma between records:
//
//	"/old" := "/new",
//	host 192.0.2.7 := "blocked",
//	network 10.0.0.0 prefixlen 8 := "inside",
//	network 172.16.0.0 mask 255.240.0.0,
//	42 := "answer",
//
// Keys and values are quoted strings (with \" and \\ escapes) or bare
// words. The records of an address file are host and network entries
// (BIG-IP's forms), which become the keys internal data groups use
// (192.0.2.7, 10.0.0.0/8); a bare address or prefix is taken too [M].
package dgfile

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Record is one key and its value ("" when the record has none).
type Record struct {
	Key, Value string
}

// Error says where a file is not in the format, as line:column.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// token is a word, a quoted string, the separator or a comma, with where
// it starts.
type token struct {
	text         string
	quoted       bool
	sep, comma   bool
	line, column int
}

// Parse reads data as a file of records of type typ (string, ip or
// integer) with the separator sep ("" for ":="). The first error stops it,
// naming its line and column and what was expected.
func Parse(data []byte, typ, sep string) ([]Record, error) {
	if sep == "" {
		sep = ":="
	}
	toks, err := lex(string(data), sep)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i := 0; i < len(toks); {
		if toks[i].comma {
			i++ // an empty record (",," or a leading comma) is skipped
			continue
		}
		end := i
		for end < len(toks) && !toks[end].comma && (end == i || toks[end].line == toks[end-1].line) {
			end++
		}
		rec, err := record(toks[i:end], typ, sep)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
		i = end
	}
	return out, nil
}

// record reads the tokens of one record.
func record(ts []token, typ, sep string) (Record, error) {
	keyEnd := len(ts)
	for j, t := range ts {
		if t.sep {
			keyEnd = j
			break
		}
	}
	var r Record
	if keyEnd < len(ts) {
		vs := ts[keyEnd+1:]
		switch {
		case len(vs) == 0:
			return r, errAt(ts[keyEnd], "%q needs a value after it", sep)
		case len(vs) > 1:
			return r, errAt(vs[1], "%q: a value is one word or one quoted string; end the record with a comma", vs[1].text)
		case vs[0].sep:
			return r, errAt(vs[0], "%q twice in one record", sep)
		}
		r.Value = vs[0].text
	}
	key := ts[:keyEnd]
	if len(key) == 0 {
		return r, errAt(ts[0], "a record needs a key before %q", sep)
	}
	switch typ {
	case "ip":
		k, err := addressKey(key)
		if err != nil {
			return r, err
		}
		r.Key = k
	case "integer":
		if len(key) != 1 {
			return r, errAt(key[1], "%q: an integer record's key is one number", key[1].text)
		}
		if _, err := strconv.ParseInt(key[0].text, 10, 64); err != nil {
			return r, errAt(key[0], "%q is not an integer", key[0].text)
		}
		r.Key = key[0].text
	default:
		if len(key) != 1 {
			return r, errAt(key[1], "%q: a string record's key is one quoted string (\"two words\")", key[1].text)
		}
		r.Key = key[0].text
	}
	return r, nil
}

// addressKey reads host A, network A prefixlen N, network A mask M, or a
// bare A or A/N, as the prefix text internal address groups use.
func addressKey(ts []token) (string, error) {
	w := func(i int) string { return ts[i].text }
	addr := func(i int) (netip.Addr, error) {
		a, err := netip.ParseAddr(w(i))
		if err != nil {
			return a, errAt(ts[i], "%q is not an IP address", w(i))
		}
		return a, nil
	}
	switch {
	case len(ts) == 1:
		if p, err := netip.ParsePrefix(w(0)); err == nil {
			return p.Masked().String(), nil
		}
		a, err := addr(0)
		return a.String(), err
	case len(ts) == 2 && w(0) == "host":
		a, err := addr(1)
		return a.String(), err
	case len(ts) == 2 && w(0) == "network":
		p, err := netip.ParsePrefix(w(1))
		if err != nil {
			return "", errAt(ts[1], "%q is not a network (A/N, or A prefixlen N, or A mask M)", w(1))
		}
		return p.Masked().String(), nil
	case len(ts) == 4 && w(0) == "network" && (w(2) == "prefixlen" || w(2) == "mask"):
		a, err := addr(1)
		if err != nil {
			return "", err
		}
		bits := -1
		if w(2) == "prefixlen" {
			if n, err := strconv.Atoi(w(3)); err == nil && n >= 0 && n <= a.BitLen() {
				bits = n
			}
		} else if m, err := netip.ParseAddr(w(3)); err == nil && m.BitLen() == a.BitLen() {
			bits = maskBits(m)
		}
		if bits < 0 {
			return "", errAt(ts[3], "%q is not a %s for %s", w(3), w(2), a)
		}
		return netip.PrefixFrom(a, bits).Masked().String(), nil
	}
	return "", errAt(ts[0], "an address record is host ADDR, network ADDR prefixlen N or network ADDR mask MASK")
}

// maskBits is the prefix length of a contiguous mask, -1 for another.
func maskBits(m netip.Addr) int {
	b := m.AsSlice()
	n, done := 0, false
	for _, x := range b {
		for bit := 7; bit >= 0; bit-- {
			on := x&(1<<bit) != 0
			if on && done {
				return -1
			}
			if on {
				n++
			} else {
				done = true
			}
		}
	}
	return n
}

// lex splits data into tokens; sep is recognised between words and
// directly after a word or string.
func lex(s, sep string) ([]token, error) {
	var out []token
	line, col := 1, 1
	i := 0
	adv := func(n int) {
		for k := 0; k < n; k++ {
			if s[i] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i++
		}
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			adv(1)
		case c == ',':
			out = append(out, token{text: ",", comma: true, line: line, column: col})
			adv(1)
		case strings.HasPrefix(s[i:], sep):
			out = append(out, token{text: sep, sep: true, line: line, column: col})
			adv(len(sep))
		case c == '"':
			t := token{quoted: true, line: line, column: col}
			adv(1)
			var b strings.Builder
			closed := false
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					adv(2)
					continue
				}
				if s[i] == '"' {
					adv(1)
					closed = true
					break
				}
				if s[i] == '\n' {
					break
				}
				b.WriteByte(s[i])
				adv(1)
			}
			if !closed {
				return nil, &Error{t.line, t.column, "a quoted string is not closed on its line"}
			}
			t.text = b.String()
			out = append(out, t)
		default:
			if c < 0x20 || c == 0x7f {
				return nil, &Error{line, col, fmt.Sprintf("byte 0x%02x is not text", c)}
			}
			t := token{line: line, column: col}
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n,\"", rune(s[j])) && !strings.HasPrefix(s[j:], sep) {
				j++
			}
			t.text = s[i:j]
			adv(j - i)
			out = append(out, t)
		}
	}
	return out, nil
}

func errAt(t token, format string, args ...any) error {
	return &Error{t.line, t.column, fmt.Sprintf(format, args...)}
}
