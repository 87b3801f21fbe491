package sipmsg

import (
	"bytes"
	"strconv"
)

// The fields a registrar's bookkeeping reads.
var (
	Contact = Field{long: "contact", short: 'm'}
	Expires = Field{long: "expires"}
)

// maxContacts bounds the Contact fields RegisterExpires reads, as a
// message's own size bounds the rest.
const maxContacts = 64

// RegisterExpires is how many seconds a REGISTER asks its bindings to
// last, so that a proxy's count of registrations frees a slot when the
// registrar would (RFC 3261 §10.2.1.1, §10.3 step 6): each Contact's
// expires parameter, else the Expires field, else def. With several
// Contacts the longest counts: the address of record stays registered
// while any of its bindings lasts. A Contact of "*" (remove them all)
// is 0. A value that is not a number is ignored, as the registrar
// would then fall back to the default.
func (m *Message) RegisterExpires(def int64) int64 {
	hdr := def
	if v, ok := m.Header(Expires); ok {
		if n, ok := seconds(v); ok {
			hdr = n
		}
	}
	best, seen := int64(-1), false
	for i := 0; i < maxContacts; i++ {
		v, ok := m.HeaderAt(Contact, i)
		if !ok {
			break
		}
		for len(v) > 0 {
			var c []byte
			c, v = nextContact(v)
			c = bytes.TrimSpace(c)
			if len(c) == 0 {
				continue
			}
			if len(c) == 1 && c[0] == '*' {
				return 0
			}
			seen = true
			n, ok := contactExpires(c)
			if !ok {
				n = hdr
			}
			best = max(best, n)
		}
	}
	if !seen {
		return hdr
	}
	return best
}

// nextContact splits the first contact-param off a Contact value,
// skipping commas inside quotes and angle brackets.
func nextContact(v []byte) (first, rest []byte) {
	quoted, angle := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<':
			angle = true
		case c == '>':
			angle = false
		case c == ',' && !angle:
			return v[:i], v[i+1:]
		}
	}
	return v, nil
}

// contactExpires is a contact's expires parameter: after the URI's '>'
// when it has one, else after the URI's first ';' (RFC 3261 §20.10).
func contactExpires(c []byte) (int64, bool) {
	if g := bytes.LastIndexByte(c, '>'); g >= 0 {
		c = c[g+1:]
	}
	for {
		s := bytes.IndexByte(c, ';')
		if s < 0 {
			return 0, false
		}
		c = bytes.TrimLeft(c[s+1:], " \t")
		name, val := c, []byte(nil)
		if e := bytes.IndexByte(c, '='); e >= 0 {
			name, val = bytes.TrimSpace(c[:e]), c[e+1:]
		}
		if end := bytes.IndexByte(name, ';'); end >= 0 {
			continue
		}
		if len(name) == 7 && isField(name, "expires", 0) && val != nil {
			if end := bytes.IndexByte(val, ';'); end >= 0 {
				val = val[:end]
			}
			return seconds(val)
		}
	}
}

// seconds reads a delta-seconds value; larger than 2^32-1 is that
// (RFC 3261 §25.1 allows no more).
func seconds(v []byte) (int64, bool) {
	n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return 0, false
	}
	return int64(min(n, 1<<32-1)), true
}

// AddrOfRecord is the URI of a From or To value (inside <> when it has
// them, else up to its parameters): what a registration and the
// sessions it bounds are counted by.
func AddrOfRecord(v []byte) []byte {
	if i := bytes.IndexByte(v, '<'); i >= 0 {
		v = v[i+1:]
		if j := bytes.IndexByte(v, '>'); j >= 0 {
			return bytes.TrimSpace(v[:j])
		}
		return nil
	}
	if j := bytes.IndexByte(v, ';'); j >= 0 {
		v = v[:j]
	}
	return bytes.TrimSpace(v)
}

// Reject is a proxy's own answer to a request it refuses (RFC 3261
// §8.2.6), so that the client ends the transaction at once rather than
// retransmitting: its Via fields, From, To with a tag, Call-ID and CSeq,
// no body.
func Reject(m *Message, code int, reason string) []byte {
	out := make([]byte, 0, 512)
	out = append(out, "SIP/2.0 "...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, ' ')
	out = append(out, reason...)
	out = append(out, "\r\n"...)
	for i := 0; i < 64; i++ {
		v, ok := m.HeaderAt(Via, i)
		if !ok {
			break
		}
		out = append(append(append(out, "Via: "...), v...), "\r\n"...)
	}
	from, _ := m.Header(From)
	out = append(append(append(out, "From: "...), from...), "\r\n"...)
	to, _ := m.Header(To)
	out = append(append(out, "To: "...), to...)
	if !m.HasToTag() {
		out = append(out, ";tag=ltm"...)
	}
	cid, _ := m.Header(CallID)
	out = append(append(append(out, "\r\nCall-ID: "...), cid...), "\r\n"...)
	cseq, _ := m.Header(CSeq)
	out = append(append(append(out, "CSeq: "...), cseq...), "\r\n"...)
	return append(out, "Content-Length: 0\r\n\r\n"...)
}
