package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// JSONDoc is a parsed JSON body (F5's "JSON cache"): what JSON_REQUEST
// and JSON_RESPONSE read and edit through the JSON:: commands, and what
// JSON::create and JSON::parse make. The dataplane parses a message's
// body into one (ParseJSON), hands it to the event (ConnState.SetJSON),
// and sends Render's bytes in place of the body when Modified.
type JSONDoc struct {
	root     *jsonElem
	modified bool
}

// JSONLimits bounds a parse as the json profile does: MaxBytes the body's
// length (maximum-bytes), MaxEntries the object members and array items
// of the whole document (maximum-entries). Zero or less: no bound.
type JSONLimits struct {
	MaxBytes, MaxEntries int
}

// jsonMaxDepth bounds the nesting of a document, so that rendering
// (which recurses) stays shallow whatever a client sends [M: BIG-IP
// documents no depth limit].
const jsonMaxDepth = 256

// jsonKind is an element's type, in F5's names (JSON::type).
type jsonKind uint8

const (
	jsonInvalid jsonKind = iota
	jsonNull
	jsonBoolean
	jsonInteger
	jsonLiteral
	jsonString
	jsonObject
	jsonArray
)

var jsonKindNames = [...]string{"invalid", "null", "boolean", "integer", "literal", "string", "object", "array"}

func (k jsonKind) String() string { return jsonKindNames[k] }

func jsonKindOf(s string) (jsonKind, bool) {
	for i, n := range jsonKindNames {
		if n == s && i != int(jsonInvalid) {
			return jsonKind(i), true
		}
	}
	return 0, false
}

// jsonElem is one JSON value ("element"). Objects keep their members in
// order, with replicate keys, as F5's cache does; numbers that fit in 64
// bits are integers, others literals kept as they were written.
type jsonElem struct {
	doc  *JSONDoc
	kind jsonKind
	b    bool
	i    int64
	s    string // a string's text, a literal's JSON text
	keys []string
	vals []*jsonElem
}

// Errors of ParseJSON, which the dataplane tells apart only by being
// errors (JSON_*_ERROR).
var (
	errJSONTooBig     = errors.New("json: body over maximum-bytes")
	errJSONTooMany    = errors.New("json: more entries than maximum-entries")
	errJSONTooDeep    = errors.New("json: nested deeper than 256")
	errJSONTrailing   = errors.New("json: data after the value")
	errJSONNotElement = errors.New("json: not a value")
	errJSONTruncated  = errors.New("json: unexpected end of the body")
)

// ParseJSON parses body into a document, within lim. The parse is
// encoding/json's tokenizer; the tree is built without recursion.
func ParseJSON(body []byte, lim JSONLimits) (*JSONDoc, error) {
	if lim.MaxBytes > 0 && len(body) > lim.MaxBytes {
		return nil, errJSONTooBig
	}
	d := &JSONDoc{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonElem
	var key string
	var haveKey bool
	entries := 0
	put := func(e *jsonElem) error {
		if len(stack) == 0 {
			d.root = e
			return nil
		}
		p := stack[len(stack)-1]
		entries++
		if lim.MaxEntries > 0 && entries > lim.MaxEntries {
			return errJSONTooMany
		}
		if p.kind == jsonObject {
			p.keys = append(p.keys, key)
			haveKey = false
		}
		p.vals = append(p.vals, e)
		return nil
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		if d.root != nil && len(stack) == 0 {
			return nil, errJSONTrailing
		}
		if len(stack) > 0 && stack[len(stack)-1].kind == jsonObject && !haveKey {
			if k, ok := tok.(string); ok {
				key, haveKey = k, true
				continue
			}
			if tok != json.Delim('}') {
				return nil, errJSONNotElement
			}
		}
		var e *jsonElem
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= jsonMaxDepth {
					return nil, errJSONTooDeep
				}
				e = &jsonElem{doc: d, kind: jsonArray}
				if t == '{' {
					e.kind = jsonObject
				}
				if err := put(e); err != nil {
					return nil, err
				}
				stack = append(stack, e)
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case nil:
			e = &jsonElem{doc: d, kind: jsonNull}
		case bool:
			e = &jsonElem{doc: d, kind: jsonBoolean, b: t}
		case string:
			e = &jsonElem{doc: d, kind: jsonString, s: t}
		case json.Number:
			e = numberElem(d, string(t))
		}
		if err := put(e); err != nil {
			return nil, err
		}
	}
	if d.root == nil {
		return nil, errJSONNotElement
	}
	if len(stack) > 0 {
		return nil, errJSONTruncated
	}
	return d, nil
}

// numberElem is a JSON number: an integer when it is one that fits in 64
// bits, else a literal (F5's "literal" type).
func numberElem(d *JSONDoc, s string) *jsonElem {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &jsonElem{doc: d, kind: jsonInteger, i: i}
	}
	return &jsonElem{doc: d, kind: jsonLiteral, s: s}
}

// Modified reports whether a rule changed the document since it was
// parsed: the dataplane then sends Render's bytes as the body.
func (d *JSONDoc) Modified() bool { return d != nil && d.modified }

// Render is the document as compact JSON text.
func (d *JSONDoc) Render() []byte {
	return d.rootElem().appendTo(nil)
}

func (d *JSONDoc) rootElem() *jsonElem {
	if d.root == nil {
		d.root = &jsonElem{doc: d}
	}
	return d.root
}

func (e *jsonElem) appendTo(b []byte) []byte {
	switch e.kind {
	case jsonNull, jsonInvalid:
		return append(b, "null"...)
	case jsonBoolean:
		return strconv.AppendBool(b, e.b)
	case jsonInteger:
		return strconv.AppendInt(b, e.i, 10)
	case jsonLiteral:
		return append(b, e.s...)
	case jsonString:
		return appendJSONString(b, e.s)
	case jsonObject:
		b = append(b, '{')
		for i, v := range e.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e.keys[i])
			b = append(b, ':')
			b = v.appendTo(b)
		}
		return append(b, '}')
	case jsonArray:
		b = append(b, '[')
		for i, v := range e.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.appendTo(b)
		}
		return append(b, ']')
	}
	return b
}

// appendJSONString quotes s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced, the rest as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
