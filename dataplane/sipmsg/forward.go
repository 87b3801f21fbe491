package sipmsg

import (
	"bytes"
	"strconv"
)

// MaxForwards is the Max-Forwards field.
var MaxForwards = Field{long: "max-forwards"}

// MaxForwardsValue is the request's Max-Forwards count; false when it
// has none or it is not a number.
func (m *Message) MaxForwardsValue() (int, bool) {
	v, ok := m.Header(MaxForwards)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
	return n, err == nil && n >= 0
}

// AppendForward appends m to dst as a proxy forwards it (RFC 3261 §16.6):
// lines (each ending CRLF: its Via, a Record-Route) as the first header
// fields and, with decMaxFwd, its Max-Forwards one less (70 added when it
// has none). Message routing's SIP peers share it with the TCP and UDP
// proxies' edits: it appends into the caller's buffer.
func AppendForward(dst []byte, m *Message, decMaxFwd bool, lines ...[]byte) []byte {
	b := m.B
	at := bytes.IndexByte(b, '\n') + 1
	dst = append(dst, b[:at]...)
	for _, l := range lines {
		dst = append(dst, l...)
	}
	if !decMaxFwd {
		return append(dst, b[at:]...)
	}
	found := false
	eachField(b[:m.HeadEnd], func(name, value []byte, from, to int) bool {
		if !isField(name, MaxForwards.long, 0) {
			return true
		}
		found = true
		n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
		if err != nil || n <= 0 {
			dst = append(dst, b[at:]...)
			return false
		}
		dst = append(dst, b[at:from]...)
		dst = append(dst, "Max-Forwards: "...)
		dst = strconv.AppendInt(dst, int64(n-1), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, b[to:]...)
		return false
	})
	if !found {
		dst = append(dst, "Max-Forwards: 70\r\n"...)
		dst = append(dst, b[at:]...)
	}
	return dst
}
