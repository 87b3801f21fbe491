package sipmsg

import (
	"bytes"
	"strconv"
)

// The session description (RFC 8866) a SIP message carries as its body
// when its Content-Type is application/sdp: the SDP:: commands read and
// change it the same way on the sip profile's flows and on message
// routing's SIP virtuals. An SDP body is lines of TYPE=VALUE, the
// session's first, then one section per medium, each opened by an m=
// line. Reading allocates nothing; edits return a new body.

// ContentType is the Content-Type field (compact form c).
var ContentType = Field{long: "content-type", short: 'c'}

// HasSDP reports whether the message's body is a session description:
// its Content-Type is application/sdp (any case, parameters ignored)
// and it has a body.
func (m *Message) HasSDP() bool {
	if len(m.Body()) == 0 {
		return false
	}
	v, ok := m.Header(ContentType)
	if !ok {
		return false
	}
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return bytes.EqualFold(bytes.TrimSpace(v), []byte("application/sdp"))
}

// SDP returns the message's session description, nil when it has none.
func (m *Message) SDP() []byte {
	if !m.HasSDP() {
		return nil
	}
	return m.Body()
}

// sdpLine is one line of a description: its type letter, its value and
// its span [from, to) in the body, the line end included.
type sdpLine struct {
	typ      byte
	value    []byte
	from, to int
}

// eachSDPLine calls fn with each TYPE=VALUE line of body in order; fn
// returns false to stop. Lines that are not TYPE=VALUE are skipped.
func eachSDPLine(body []byte, fn func(l sdpLine) bool) {
	off := 0
	for off < len(body) {
		end := bytes.IndexByte(body[off:], '\n')
		next := len(body)
		if end >= 0 {
			next = off + end + 1
			end = off + end
		} else {
			end = len(body)
		}
		line := bytes.TrimRight(body[off:end], "\r")
		if len(line) >= 2 && line[1] == '=' {
			if !fn(sdpLine{typ: line[0], value: line[2:], from: off, to: next}) {
				return
			}
		}
		off = next
	}
}

// SDPField is the value of the n-th (from 0) line of type typ in the
// description, counting the session's and every medium's lines, and
// whether there is one.
func SDPField(body []byte, typ byte, n int) ([]byte, bool) {
	var v []byte
	found := false
	eachSDPLine(body, func(l sdpLine) bool {
		if l.typ != typ {
			return true
		}
		if n == 0 {
			v, found = l.value, true
			return false
		}
		n--
		return true
	})
	return v, found
}

// SDPSessionID is the session id of the description's origin (the o=
// line's second word), nil when it has none.
func SDPSessionID(body []byte) []byte {
	o, ok := SDPField(body, 'o', 0)
	if !ok {
		return nil
	}
	return word(o, 1)
}

// word is the n-th (from 0) space-separated word of v, nil when it has
// fewer.
func word(v []byte, n int) []byte {
	for i := 0; ; i++ {
		v = bytes.TrimLeft(v, " ")
		if len(v) == 0 {
			return nil
		}
		e := bytes.IndexByte(v, ' ')
		if e < 0 {
			e = len(v)
		}
		if i == n {
			return v[:e]
		}
		v = v[e:]
	}
}

// SDPMedia is one medium of a description: its m= line's value and
// where its section's lines lie in the body.
type SDPMedia struct {
	// Line is the m= line's value: "audio 49170 RTP/AVP 0 8".
	Line []byte
	// from is where the m= line starts, to where the section ends.
	from, to int
	// mline is the m= line's span.
	mline sdpLine
}

// Type is the medium's type (audio, video, ...): the m= line's first
// word.
func (md SDPMedia) Type() []byte { return word(md.Line, 0) }

// Port is the medium's port as the m= line gives it (with its /count
// when there is one).
func (md SDPMedia) Port() []byte { return word(md.Line, 1) }

// Transport is the medium's transport protocol (RTP/AVP, ...).
func (md SDPMedia) Transport() []byte { return word(md.Line, 2) }

// SDPMediaAt is the n-th (from 0) medium of the description; false when
// it has fewer.
func SDPMediaAt(body []byte, n int) (SDPMedia, bool) {
	var md SDPMedia
	i := -1
	eachSDPLine(body, func(l sdpLine) bool {
		if l.typ != 'm' {
			return true
		}
		if i == n {
			md.to = l.from
			return false
		}
		i++
		if i == n {
			md = SDPMedia{Line: l.value, from: l.from, to: len(body), mline: l}
		}
		return true
	})
	return md, md.Line != nil
}

// SDPMediaCount is how many media the description has.
func SDPMediaCount(body []byte) int {
	n := 0
	eachSDPLine(body, func(l sdpLine) bool {
		if l.typ == 'm' {
			n++
		}
		return true
	})
	return n
}

// sessionEnd is where the session's part of the description ends: its
// first m= line, else the body's end.
func sessionEnd(body []byte) int {
	end := len(body)
	eachSDPLine(body, func(l sdpLine) bool {
		if l.typ == 'm' {
			end = l.from
			return false
		}
		return true
	})
	return end
}

// sectionLine is the n-th line of type typ in body[from:to].
func sectionLine(body []byte, from, to int, typ byte, n int) (sdpLine, bool) {
	var out sdpLine
	found := false
	eachSDPLine(body[from:to], func(l sdpLine) bool {
		if l.typ != typ {
			return true
		}
		if n == 0 {
			l.from += from
			l.to += from
			out, found = l, true
			return false
		}
		n--
		return true
	})
	return out, found
}

// Attr is the medium's n-th (from 0) a= line's value, and whether it
// has one.
func (md SDPMedia) Attr(body []byte, n int) ([]byte, bool) {
	l, ok := sectionLine(body, md.from, md.to, 'a', n)
	return l.value, ok
}

// Conn is the medium's connection (its c= line's value), else the
// session's, and whether either has one.
func (md SDPMedia) Conn(body []byte) ([]byte, bool) {
	if l, ok := sectionLine(body, md.from, md.to, 'c', 0); ok {
		return l.value, true
	}
	l, ok := sectionLine(body, 0, sessionEnd(body), 'c', 0)
	return l.value, ok
}

// lineEnd is the line end body's lines use: CRLF unless its first line
// ends with a bare LF.
func lineEnd(body []byte) string {
	if i := bytes.IndexByte(body, '\n'); i > 0 && body[i-1] != '\r' {
		return "\n"
	}
	return "\r\n"
}

// replaceLine returns body with line l's value replaced by value.
func replaceLine(body []byte, l sdpLine, value []byte) []byte {
	out := make([]byte, 0, len(body)+len(value))
	out = append(out, body[:l.from]...)
	out = append(out, l.typ, '=')
	out = append(out, value...)
	le := body[l.from:l.to]
	if bytes.HasSuffix(le, []byte("\r\n")) {
		out = append(out, "\r\n"...)
	} else if bytes.HasSuffix(le, []byte("\n")) {
		out = append(out, '\n')
	} else {
		out = append(out, lineEnd(body)...)
	}
	return append(out, body[l.to:]...)
}

// SetSDPField returns body with the n-th line of type typ given value;
// false when there is no such line.
func SetSDPField(body []byte, typ byte, n int, value []byte) ([]byte, bool) {
	l, ok := sectionLine(body, 0, len(body), typ, n)
	if !ok {
		return body, false
	}
	return replaceLine(body, l, value), true
}

// SetSDPMediaPort returns body with the n-th medium's port (the m=
// line's second word, its /count kept) set to port; false when there is
// no such medium.
func SetSDPMediaPort(body []byte, n int, port uint16) ([]byte, bool) {
	md, ok := SDPMediaAt(body, n)
	if !ok {
		return body, false
	}
	old := md.Port()
	if old == nil {
		return body, false
	}
	at := bytes.Index(md.Line, old)
	v := make([]byte, 0, len(md.Line)+5)
	v = append(v, md.Line[:at]...)
	v = strconv.AppendUint(v, uint64(port), 10)
	if c := bytes.IndexByte(old, '/'); c >= 0 {
		v = append(v, old[c:]...)
	}
	v = append(v, md.Line[at+len(old):]...)
	return replaceLine(body, md.mline, v), true
}

// SetSDPMediaConn returns body with the n-th medium's c= line set to
// value; a medium without one gets its own after its m= line and any i=
// line (RFC 8866 §5's order), leaving the session's as it is. false
// when there is no such medium.
func SetSDPMediaConn(body []byte, n int, value []byte) ([]byte, bool) {
	md, ok := SDPMediaAt(body, n)
	if !ok {
		return body, false
	}
	if l, ok := sectionLine(body, md.from, md.to, 'c', 0); ok {
		return replaceLine(body, l, value), true
	}
	at := md.mline.to
	if l, ok := sectionLine(body, md.from, md.to, 'i', 0); ok {
		at = l.to
	}
	le := lineEnd(body)
	out := make([]byte, 0, len(body)+len(value)+4)
	out = append(out, body[:at]...)
	if at > 0 && body[at-1] != '\n' {
		out = append(out, le...)
	}
	out = append(out, 'c', '=')
	out = append(out, value...)
	out = append(out, le...)
	return append(out, body[at:]...), true
}
