// Package httpx is the HTTP/1.1 message framing and header editing the
// HTTP profile needs: where a request or response ends in a byte stream
// (Content-Length, chunked, bodiless responses, close-delimited ones), the
// few header facts load balancing acts on (method, version, Connection,
// Cookie), and in-place edits (X-Forwarded-For, OneConnect's Connection
// transformations, Set-Cookie for cookie persistence). It works on the
// bytes the message engine already holds: parsing allocates nothing, and
// an edit is one copy into the buffer that leaves for the peer.
package httpx

import (
	"bytes"
	"errors"
)

// Errors that end a stream: a message whose boundary cannot be trusted
// must not be forwarded (request smuggling starts with two parsers that
// disagree on where a message ends).
var (
	// ErrBadMessage is a malformed start line, header or chunk.
	ErrBadMessage = errors.New("httpx: malformed HTTP message")
	// ErrHeaderTooLarge is a header block above the configured maximum.
	ErrHeaderTooLarge = errors.New("httpx: HTTP header larger than the maximum header size")
	// ErrBodyTooLarge is a message above the framer's maximum size.
	ErrBodyTooLarge = errors.New("httpx: HTTP message larger than the maximum message size")
	// ErrStreamBody says a response's body passes the framer's maximum
	// and, the framer being asked to stream, goes through in parts
	// (ResponseFramer.Body): not a failure.
	ErrStreamBody = errors.New("httpx: HTTP body streamed")
	// ErrTooManyHeaders is a header block with more fields than the
	// configured maximum count.
	ErrTooManyHeaders = errors.New("httpx: HTTP header count exceeds the maximum header count")
)

// DefaultMaxHeader is the largest header block accepted by default, as the
// http profile's max-header-size (32 KiB).
const DefaultMaxHeader = 32 << 10

// DefaultMaxHeaderCount is the most header fields a message may carry by
// default, as the http profile's max-header-count (64).
const DefaultMaxHeaderCount = 64

// Head is what framing and balancing need to know about one message's
// header block. Offsets are relative to the message start.
type Head struct {
	// HeaderEnd is the length of the header block, blank line included.
	HeaderEnd int
	// Minor is the HTTP/1.x minor version.
	Minor int
	// Method is the request method (a view into the message), nil for a
	// response.
	Method []byte
	// Status is a response's status code.
	Status int
	// ContentLength is the body length, -1 when absent.
	ContentLength int64
	// Chunked: the last transfer coding is chunked.
	Chunked bool
	// OtherCoding: a transfer coding other than chunked is last (a
	// response is then close-delimited; a request is refused).
	OtherCoding bool
	// Close and KeepAlive are the Connection header's tokens.
	Close, KeepAlive bool
	// Start is where a response's final header block begins, after any
	// interim (1xx) responses framed with it.
	Start int
	// UntilClose: the response's body ends when the server closes.
	UntilClose bool
	// Upgrade: the request asks to switch protocols (an Upgrade field and
	// the upgrade token in Connection, as a WebSocket handshake has); a
	// 101 answer turns the connection into a tunnel.
	Upgrade bool
	// ExpectContinue: the request carries Expect: 100-continue.
	ExpectContinue bool
	// Fields is the number of header fields.
	Fields int
}

// WantsClose reports whether the sender ends the connection after this
// message: Connection: close, or HTTP/1.0 without keep-alive.
func (h *Head) WantsClose() bool {
	return h.Close || (h.Minor == 0 && !h.KeepAlive)
}

// IsHead reports a HEAD request, whose response has no body.
func (h *Head) IsHead() bool { return string(h.Method) == "HEAD" }

// IsConnect reports a CONNECT request: a 2xx answer has no body and
// turns the connection into a tunnel.
func (h *Head) IsConnect() bool { return string(h.Method) == "CONNECT" }

// headerEnd finds the end of a header block (after the blank line),
// scanning from from; -1 when not yet there. Lines may end in CRLF or LF.
func headerEnd(b []byte, from int) int {
	if from < 0 {
		from = 0
	}
	for i := from; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		j += i
		// j is a line end; the next line is blank when it is "\n" or "\r\n".
		if j+1 < len(b) && b[j+1] == '\n' {
			return j + 2
		}
		if j+2 < len(b) && b[j+1] == '\r' && b[j+2] == '\n' {
			return j + 3
		}
		if j+1 >= len(b) || (j+2 >= len(b) && b[j+1] == '\r') {
			return -1
		}
		i = j + 1
	}
	return -1
}

// line returns the line starting at i without its line end, and the index
// of the next line.
func line(b []byte, i int) (l []byte, next int) {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return b[i:], len(b)
	}
	l = b[i : i+j]
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l, i + j + 1
}

// isToken reports RFC 9110 token characters.
func isToken(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// IsToken reports whether b is a non-empty RFC 9110 token, as a field
// name must be. Why exported: the rules engine checks the names a rule
// inserts, and notes which edits keep a head's framing, with the test the
// parser applies.
func IsToken[T string | []byte](b T) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); i++ {
		if !isToken(b[i]) {
			return false
		}
	}
	return true
}

// version parses "HTTP/1.x" and returns x.
func version(b []byte) (int, bool) {
	if len(b) != 8 || string(b[:7]) != "HTTP/1." || b[7] < '0' || b[7] > '9' {
		return 0, false
	}
	return int(b[7] - '0'), true
}

// ParseRequestLine checks a request line as soon as it is complete, so
// garbage is refused before a whole header block's worth arrives.
func parseRequestLine(l []byte, h *Head) bool {
	sp := bytes.IndexByte(l, ' ')
	if sp <= 0 || !IsToken(l[:sp]) {
		return false
	}
	rest := l[sp+1:]
	sp2 := bytes.LastIndexByte(rest, ' ')
	if sp2 <= 0 {
		return false
	}
	target := rest[:sp2]
	for _, c := range target {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	minor, ok := version(rest[sp2+1:])
	if !ok {
		return false
	}
	h.Method = l[:sp]
	h.Minor = minor
	return true
}

func parseStatusLine(l []byte, h *Head) bool {
	if len(l) < 12 {
		return false
	}
	minor, ok := version(l[:8])
	if !ok || l[8] != ' ' {
		return false
	}
	code := 0
	for _, c := range l[9:12] {
		if c < '0' || c > '9' {
			return false
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 || (len(l) > 12 && l[12] != ' ') {
		return false
	}
	h.Minor, h.Status = minor, code
	return true
}

// EqualFold reports whether a is s, ASCII letters compared without
// case; s is in lower case. The one such comparison of the HTTP
// packages (header names, tokens), which allocates nothing.
func EqualFold(a []byte, s string) bool {
	if len(a) != len(s) {
		return false
	}
	for i := range a {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// Field calls fn for each header field of the block b[:end] after the
// start line, with the offsets of the line (its end excluded), until fn
// returns false. It reports false for a malformed field.
func Fields(b []byte, end int, fn func(name, value []byte, start, stop int) bool) bool {
	_, i := line(b[:end], 0)
	for i < end {
		l, next := line(b[:end], i)
		if len(l) == 0 {
			return true
		}
		if l[0] == ' ' || l[0] == '\t' {
			return false // obsolete line folding: refused
		}
		c := bytes.IndexByte(l, ':')
		if c <= 0 || !IsToken(l[:c]) {
			return false
		}
		for _, ch := range l[c+1:] {
			if ch == 0 || ch == '\r' || ch == '\n' {
				return false
			}
		}
		if !fn(l[:c], trimOWS(l[c+1:]), i, i+len(l)) {
			return true
		}
		i = next
	}
	return true
}

// parseHeaders fills the framing facts of h from b[:h.HeaderEnd].
func parseHeaders(b []byte, h *Head) error {
	h.ContentLength = -1
	bad := false
	upgradeField, upgradeTok := false, false
	ok := Fields(b, h.HeaderEnd, func(name, value []byte, _, _ int) bool {
		h.Fields++
		switch {
		case EqualFold(name, "upgrade"):
			upgradeField = len(value) > 0
		case EqualFold(name, "expect"):
			h.ExpectContinue = EqualFold(value, "100-continue")
		case EqualFold(name, "content-length"):
			var n int64
			if len(value) == 0 || len(value) > 15 {
				bad = true
				return false
			}
			for _, c := range value {
				if c < '0' || c > '9' {
					bad = true
					return false
				}
				n = n*10 + int64(c-'0')
			}
			if h.ContentLength >= 0 && h.ContentLength != n {
				bad = true
				return false
			}
			h.ContentLength = n
		case EqualFold(name, "transfer-encoding"):
			last := value
			if k := bytes.LastIndexByte(value, ','); k >= 0 {
				last = trimOWS(value[k+1:])
			}
			h.Chunked = EqualFold(last, "chunked")
			h.OtherCoding = !h.Chunked
		case EqualFold(name, "connection"):
			for len(value) > 0 {
				tok := value
				if k := bytes.IndexByte(value, ','); k >= 0 {
					tok, value = value[:k], value[k+1:]
				} else {
					value = nil
				}
				tok = trimOWS(tok)
				switch {
				case EqualFold(tok, "close"):
					h.Close = true
				case EqualFold(tok, "keep-alive"):
					h.KeepAlive = true
				case EqualFold(tok, "upgrade"):
					upgradeTok = true
				}
			}
		}
		return true
	})
	if !ok || bad {
		return ErrBadMessage
	}
	h.Upgrade = upgradeField && upgradeTok
	return nil
}

// ParseRequest parses a complete request header block at the start of b.
func ParseRequest(b []byte) (Head, error) {
	h, err := parseHead(b, false)
	if err == nil && (h.OtherCoding || (h.Chunked && h.ContentLength >= 0)) {
		// Both, or a coding whose end cannot be found: the classic
		// smuggling shapes. Refused, as RFC 9112 §6.3 allows.
		return h, ErrBadMessage
	}
	return h, err
}

// ParseResponse parses a complete response header block at the start of b.
func ParseResponse(b []byte) (Head, error) {
	h, err := parseHead(b, true)
	if err == nil && (h.Chunked || h.OtherCoding) {
		h.ContentLength = -1 // Transfer-Encoding overrides Content-Length
	}
	return h, err
}

// parseHead parses a request's or a response's header block. The start
// line's parser is called directly, not through a function value, so that
// h stays on the stack: a parse allocates nothing.
func parseHead(b []byte, response bool) (Head, error) {
	var h Head
	end := headerEnd(b, 0)
	if end < 0 {
		return h, ErrBadMessage
	}
	h.HeaderEnd = end
	l, _ := line(b, 0)
	ok := false
	if response {
		ok = parseStatusLine(l, &h)
	} else {
		ok = parseRequestLine(l, &h)
	}
	if !ok {
		return h, ErrBadMessage
	}
	if err := parseHeaders(b, &h); err != nil {
		return h, err
	}
	return h, nil
}
