// Package sipmsg reads and edits SIP messages (RFC 3261) in place: the
// start line, header fields by long or compact name, the top Via's
// branch, and the edits iRules make (a field inserted, replaced or
// removed, the body replaced with its Content-Length). It is shared by
// the message-based load balancer, which frames and routes SIP, and the
// rules engine, whose SIP:: commands read and change a message, and it
// holds what the sip profile's proxy settings keep per client on TCP
// (mblb) and UDP virtuals alike: the dialogs followed to their member
// and the registrations bounded (Dialogs, Registrar). Reading allocates
// nothing.
package sipmsg

import (
	"bytes"
	"errors"
	"strconv"
)

// Errors of reading a message.
var (
	// ErrBad means the bytes do not start a SIP message (a start line
	// that is neither a request nor a status line).
	ErrBad = errors.New("not a SIP message")
	// ErrLength means a Content-Length is not a number, or two of them
	// disagree.
	ErrLength = errors.New("bad SIP Content-Length")
)

// HeadEnd is the offset just past the empty line that ends the head, or
// -1, scanning from from. A bare LF is taken as a line end, as RFC 3261
// §7.5 lets a receiver do.
func HeadEnd(buf []byte, from int) int {
	for i := from; i < len(buf); i++ {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j
		k := i + 1
		if k < len(buf) && buf[k] == '\r' {
			k++
		}
		if k < len(buf) && buf[k] == '\n' {
			return k + 1
		}
		if k >= len(buf) {
			return -1
		}
	}
	return -1
}

// ContentLength reads Content-Length (or its compact form l) from a
// head; absent, the body is empty [M: RFC 3261 makes it mandatory on
// stream transports; a message without it is framed, not refused].
func ContentLength(head []byte) (int64, error) {
	if !ValidStartLine(head) {
		return 0, ErrBad
	}
	cl := int64(-1)
	var err error
	eachField(head, func(name, value []byte, _, _ int) bool {
		if !isField(name, "content-length", 'l') {
			return true
		}
		v := bytes.TrimSpace(value)
		var n int64
		if len(v) == 0 || len(v) > 12 {
			err = ErrLength
			return false
		}
		for _, c := range v {
			if c < '0' || c > '9' {
				err = ErrLength
				return false
			}
			n = n*10 + int64(c-'0')
		}
		if cl >= 0 && cl != n {
			err = ErrLength
			return false
		}
		cl = n
		return true
	})
	if err != nil {
		return 0, err
	}
	if cl < 0 {
		cl = 0
	}
	return cl, nil
}

// ValidStartLine checks the first line is a status line (SIP/2.0 and a
// three-digit code) or a request line (a method token, a URI, SIP/2.0).
func ValidStartLine(head []byte) bool {
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return false
	}
	line := bytes.TrimRight(head[:i], "\r")
	if bytes.HasPrefix(line, []byte("SIP/2.0 ")) {
		c := line[len("SIP/2.0 "):]
		return len(c) >= 3 && isDigit(c[0]) && isDigit(c[1]) && isDigit(c[2]) && (len(c) == 3 || c[3] == ' ')
	}
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isToken(line[:sp]) {
		return false
	}
	rest := line[sp+1:]
	sp2 := bytes.LastIndexByte(rest, ' ')
	return sp2 > 0 && bytes.Equal(rest[sp2+1:], []byte("SIP/2.0"))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte("()<>@,;:\\\"/[]?={}"), c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}

// eachField calls fn with every header field of a head (after the start
// line), a folded value as it stands, and the field's line span [from,
// to) in head, its line end included; fn returns false to stop.
func eachField(head []byte, fn func(name, value []byte, from, to int) bool) {
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return
	}
	off := i + 1
	rest := head[off:]
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
		}
		// A folded field continues on lines starting with SP or HT.
		for end+1 < len(rest) && (rest[end+1] == ' ' || rest[end+1] == '\t') {
			n := bytes.IndexByte(rest[end+1:], '\n')
			if n < 0 {
				end = len(rest)
				break
			}
			end += 1 + n
		}
		line := bytes.TrimRight(rest[:min(end, len(rest))], "\r")
		span := min(end+1, len(rest))
		from := off
		off += span
		rest = rest[span:]
		if len(line) == 0 {
			return
		}
		c := bytes.IndexByte(line, ':')
		if c <= 0 {
			continue
		}
		if !fn(bytes.TrimRight(line[:c], " \t"), line[c+1:], from, off) {
			return
		}
	}
}

// compact maps the compact forms of RFC 3261 §7.3.3 and later RFCs to
// the long names.
var compact = [26]string{
	0: "accept-contact", 'b' - 'a': "referred-by", 'c' - 'a': "content-type",
	'd' - 'a': "request-disposition", 'e' - 'a': "content-encoding", 'f' - 'a': "from",
	'i' - 'a': "call-id", 'j' - 'a': "reject-contact", 'k' - 'a': "supported",
	'l' - 'a': "content-length", 'm' - 'a': "contact", 'n' - 'a': "identity-info",
	'o' - 'a': "event", 'r' - 'a': "refer-to", 's' - 'a': "subject",
	't' - 'a': "to", 'u' - 'a': "allow-events", 'v' - 'a': "via",
	'x' - 'a': "session-expires", 'y' - 'a': "identity",
}

// isField reports whether a field name is long (lower case) or its
// compact letter short (0: none), case-insensitively.
func isField(name []byte, long string, short byte) bool {
	if len(name) == 1 && short != 0 {
		return name[0]|0x20 == short
	}
	if len(name) != len(long) {
		return false
	}
	for i := range name {
		if name[i]|0x20 != long[i] && !(name[i] == '-' && long[i] == '-') {
			return false
		}
	}
	return true
}

// Field is a header field name with its compact form, found once so
// that looking it up per message costs no allocation.
type Field struct {
	long  string // lower case
	short byte
}

// NewField names a header field: long or compact, any case.
func NewField(name string) Field {
	b := []byte(name)
	for i := range b {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] |= 0x20
		}
	}
	f := Field{long: string(b)}
	if len(b) == 1 && b[0] >= 'a' && b[0] <= 'z' {
		f.long, f.short = compact[b[0]-'a'], b[0]
		if f.long == "" {
			f.long = string(b)
		}
		return f
	}
	for i, l := range compact {
		if l != "" && l == f.long {
			f.short = byte('a' + i)
		}
	}
	return f
}

// Name is the field's long name, lower case.
func (f Field) Name() string { return f.long }

// IsZero reports an unnamed field.
func (f Field) IsZero() bool { return f.long == "" }

// The fields routing reads.
var (
	Via    = Field{long: "via", short: 'v'}
	CallID = Field{long: "call-id", short: 'i'}
	From   = Field{long: "from", short: 'f'}
	To     = Field{long: "to", short: 't'}
	CSeq   = Field{long: "cseq"}
)

// Message is one framed SIP message read in place: its start line and
// where its head ends. Fields are looked up on demand.
type Message struct {
	// B is the whole message.
	B []byte
	// Request: a request (Method, URI) rather than a response (Code,
	// Reason).
	Request bool
	Method  []byte
	URI     []byte
	Code    int
	Reason  []byte
	// HeadEnd is where the body starts.
	HeadEnd int
}

// Parse reads a framed message's start line. Keep-alive CRLFs give
// ErrBad; check IsKeepAlive first.
func Parse(b []byte) (Message, error) {
	m := Message{B: b}
	hend := HeadEnd(b, 0)
	if hend < 0 || !ValidStartLine(b) {
		return m, ErrBad
	}
	m.HeadEnd = hend
	i := bytes.IndexByte(b, '\n')
	line := bytes.TrimRight(b[:i], "\r")
	if bytes.HasPrefix(line, []byte("SIP/2.0 ")) {
		c := line[len("SIP/2.0 "):]
		m.Code = int(c[0]-'0')*100 + int(c[1]-'0')*10 + int(c[2]-'0')
		if len(c) > 4 {
			m.Reason = c[4:]
		}
		return m, nil
	}
	sp := bytes.IndexByte(line, ' ')
	m.Request = true
	m.Method = line[:sp]
	rest := line[sp+1:]
	m.URI = rest[:bytes.LastIndexByte(rest, ' ')]
	return m, nil
}

// IsKeepAlive reports whether a framed message is only CRLFs.
func IsKeepAlive(b []byte) bool { return len(b) > 0 && (b[0] == '\r' || b[0] == '\n') }

// Header returns the first value of a field, trimmed, and whether the
// message has it.
func (m *Message) Header(f Field) ([]byte, bool) {
	return m.HeaderAt(f, 0)
}

// HeaderAt returns the value of the field's occurrence n (0 the first),
// counting fields, not the comma-separated values inside one.
func (m *Message) HeaderAt(f Field, n int) ([]byte, bool) {
	var v []byte
	found := false
	eachField(m.B[:m.HeadEnd], func(name, value []byte, _, _ int) bool {
		if isField(name, f.long, f.short) {
			if n == 0 {
				v, found = bytes.TrimSpace(value), true
				return false
			}
			n--
		}
		return true
	})
	return v, found
}

// Count is how many fields of that name the message has.
func (m *Message) Count(f Field) int {
	n := 0
	eachField(m.B[:m.HeadEnd], func(name, _ []byte, _, _ int) bool {
		if isField(name, f.long, f.short) {
			n++
		}
		return true
	})
	return n
}

// Body is what follows the head.
func (m *Message) Body() []byte { return m.B[m.HeadEnd:] }

// Branch is the branch parameter of the topmost Via: the transaction a
// response belongs to (RFC 3261 §17.2.3).
func (m *Message) Branch() []byte {
	v, ok := m.Header(Via)
	if !ok {
		return nil
	}
	if c := bytes.IndexByte(v, ','); c >= 0 {
		v = v[:c]
	}
	for len(v) > 0 {
		s := bytes.IndexByte(v, ';')
		if s < 0 {
			return nil
		}
		v = v[s+1:]
		p := bytes.TrimLeft(v, " \t")
		if len(p) >= 7 && isField(p[:6], "branch", 0) && (p[6] == '=' || p[6] == ' ') {
			p = bytes.TrimLeft(p[6:], " \t=")
			e := bytes.IndexAny(p, "; \t,")
			if e < 0 {
				e = len(p)
			}
			return p[:e]
		}
	}
	return nil
}

// String describes the message for logs.
func (m *Message) String() string {
	if m.Request {
		return string(m.Method) + " " + string(m.URI)
	}
	return "SIP/2.0 " + strconv.Itoa(m.Code)
}

// Edits. Each returns a new message (the input is not changed) and is
// meant for the rare path of a rule that changes a message.

// Remove drops every field of that name.
func Remove(b []byte, f Field) []byte {
	m, err := Parse(b)
	if err != nil {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	eachField(b[:m.HeadEnd], func(name, _ []byte, from, to int) bool {
		if isField(name, f.long, f.short) {
			out = append(out, b[last:from]...)
			last = to
		}
		return true
	})
	return append(out, b[last:]...)
}

// Insert adds a field after the start line's other fields: just before
// the empty line that ends the head, or, for Via and Record-Route,
// which are read top first, as the first field.
func Insert(b []byte, name, value string) []byte {
	m, err := Parse(b)
	if err != nil {
		return b
	}
	line := name + ": " + value + "\r\n"
	at := m.HeadEnd - 2
	if b[m.HeadEnd-1] == '\n' && (m.HeadEnd < 2 || b[m.HeadEnd-2] != '\r') {
		at = m.HeadEnd - 1
	}
	if f := NewField(name); f == Via || f.long == "record-route" {
		at = bytes.IndexByte(b, '\n') + 1
	}
	out := make([]byte, 0, len(b)+len(line))
	out = append(out, b[:at]...)
	out = append(out, line...)
	return append(out, b[at:]...)
}

// Replace sets the first field of that name to value (keeping its
// place), or inserts it when the message has none.
func Replace(b []byte, name, value string) []byte {
	m, err := Parse(b)
	if err != nil {
		return b
	}
	f := NewField(name)
	var out []byte
	done := false
	eachField(b[:m.HeadEnd], func(n, _ []byte, from, to int) bool {
		if !isField(n, f.long, f.short) {
			return true
		}
		out = make([]byte, 0, len(b)+len(value))
		out = append(out, b[:from]...)
		out = append(out, n...)
		out = append(out, ": "...)
		out = append(out, value...)
		out = append(out, "\r\n"...)
		out = append(out, b[to:]...)
		done = true
		return false
	})
	if !done {
		return Insert(b, name, value)
	}
	return out
}

// SetBody replaces the body and its Content-Length.
func SetBody(b, body []byte) []byte {
	m, err := Parse(b)
	if err != nil {
		return b
	}
	head := Replace(b[:m.HeadEnd], "Content-Length", strconv.Itoa(len(body)))
	if Count(head, Field{long: "content-length", short: 'l'}) > 1 {
		head = Replace(Remove(head, Field{long: "content-length", short: 'l'}), "Content-Length", strconv.Itoa(len(body)))
	}
	return append(head, body...)
}

// Count is Message.Count for raw bytes.
func Count(b []byte, f Field) int {
	m, err := Parse(b)
	if err != nil {
		return 0
	}
	return m.Count(f)
}

// Proxy edits: what the sip profile's Via and Record-Route settings
// do to every message, so they append into a buffer the caller reuses
// rather than allocate.

// AppendTop appends b to dst with lines (each ending CRLF) inserted as
// the first header fields, where a proxy puts its Via and Record-Route
// (RFC 3261 §16.6 steps 4 and 8). b must be a parsed message.
func AppendTop(dst, b []byte, lines ...[]byte) []byte {
	at := bytes.IndexByte(b, '\n') + 1
	dst = append(dst, b[:at]...)
	for _, l := range lines {
		dst = append(dst, l...)
	}
	return append(dst, b[at:]...)
}

// TopVia is the first value of the first Via field (the hop that sent
// the message), trimmed.
func (m *Message) TopVia() []byte {
	v, ok := m.Header(Via)
	if !ok {
		return nil
	}
	if c := bytes.IndexByte(v, ','); c >= 0 {
		v = v[:c]
	}
	return bytes.TrimSpace(v)
}

// AppendWithoutTopVia appends m to dst without its topmost Via value:
// the value a proxy inserted, taken off the response before it goes
// back (RFC 3261 §16.7 step 3). A Via field holding several values
// keeps the others.
func AppendWithoutTopVia(dst []byte, m *Message) []byte {
	b := m.B
	done := false
	eachField(b[:m.HeadEnd], func(name, value []byte, from, to int) bool {
		if !isField(name, Via.long, Via.short) {
			return true
		}
		done = true
		c := bytes.IndexByte(value, ',')
		if c < 0 {
			dst = append(dst, b[:from]...)
			dst = append(dst, b[to:]...)
			return false
		}
		// Keep the field with the values after the first.
		vstart := from + bytes.IndexByte(b[from:to], ':') + 1
		dst = append(dst, b[:vstart]...)
		dst = append(dst, ' ')
		rest := bytes.TrimLeft(b[vstart+(c+1):to], " \t")
		dst = append(dst, rest...)
		dst = append(dst, b[to:]...)
		return false
	})
	if !done {
		dst = append(dst, b...)
	}
	return dst
}

// CSeqMethod is the method of the CSeq field: the request a response
// answers.
func (m *Message) CSeqMethod() []byte {
	v, ok := m.Header(CSeq)
	if !ok {
		return nil
	}
	v = bytes.TrimSpace(v)
	if s := bytes.LastIndexAny(v, " \t"); s >= 0 {
		return v[s+1:]
	}
	return nil
}

// HasToTag reports whether the To field carries a tag: the request is
// inside a dialog (RFC 3261 §12.2), not one that would create it.
func (m *Message) HasToTag() bool {
	v, ok := m.Header(To)
	if !ok {
		return false
	}
	// Parameters follow the URI, after a closing '>' when there is one.
	if g := bytes.LastIndexByte(v, '>'); g >= 0 {
		v = v[g+1:]
	}
	for len(v) > 0 {
		s := bytes.IndexByte(v, ';')
		if s < 0 {
			return false
		}
		v = bytes.TrimLeft(v[s+1:], " \t")
		if len(v) >= 3 && isField(v[:3], "tag", 0) && (len(v) == 3 || v[3] == '=' || v[3] == ' ' || v[3] == ';') {
			return true
		}
	}
	return false
}

// FirstValue is the first of a field's comma-separated values (a Via,
// Route or Record-Route field may list several), trimmed; commas inside
// <...> or a quoted string do not separate.
func FirstValue(v []byte) []byte {
	angle, quoted := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++ // the escaped character
		case quoted:
			quoted = c != '"'
		case c == '"':
			quoted = true
		case c == '<':
			angle = true
		case c == '>':
			angle = false
		case c == ',' && !angle:
			return bytes.TrimSpace(v[:i])
		}
	}
	return bytes.TrimSpace(v)
}
