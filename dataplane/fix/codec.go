package fix

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// SOH separates fields.
const SOH = 0x01

// The tags of the standard header and trailer the codec reads.
const (
	TagBeginString  = 8
	TagBodyLength   = 9
	TagCheckSum     = 10
	TagMsgType      = 35
	TagSenderCompID = 49
	TagTargetCompID = 56
)

// DefaultMax bounds a message's BodyLength: the proxy holds a whole
// message before its events run, so a bound keeps one client from making
// it hold an unbounded one [M: BIG-IP documents no bound].
const DefaultMax = 1 << 20

// maxHead bounds "8=BeginString<SOH>9=BodyLength<SOH>".
const maxHead = 64

// Error is a message the codec refuses; Framing tells that the stream
// cannot be read on after it (its length is not known), so the
// connection must end whatever error-action says.
type Error struct {
	Reason  string
	Framing bool
}

func (e *Error) Error() string { return "fix: " + e.Reason }

func errorf(framing bool, format string, a ...any) error {
	return &Error{Reason: fmt.Sprintf(format, a...), Framing: framing}
}

// ErrTooLarge is a BodyLength past the reader's bound.
var ErrTooLarge = errors.New("fix: message past the size bound")

// Reader cuts a byte stream into whole messages on BodyLength.
type Reader struct {
	R   io.Reader
	Max int // BodyLength bound; 0: DefaultMax
	br  *bufio.Reader
	buf []byte
}

// Next reads the next whole message: its bytes from "8=" to the SOH
// after the checksum, valid until the next call. io.EOF: the stream ended
// between messages; io.ErrUnexpectedEOF within one.
func (r *Reader) Next() ([]byte, error) {
	if r.br == nil {
		r.br = bufio.NewReaderSize(r.R, 4096)
	}
	max := r.Max
	if max <= 0 {
		max = DefaultMax
	}
	b := r.buf[:0]
	// The head: two fields, 8= and 9=.
	fields := 0
	for fields < 2 {
		c, err := r.br.ReadByte()
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		b = append(b, c)
		if c == SOH {
			fields++
		}
		if len(b) == 2 && (b[0] != '8' || b[1] != '=') {
			return nil, errorf(true, "the message does not begin with BeginString (8)")
		}
		if len(b) > maxHead {
			return nil, errorf(true, "no BodyLength within the first %d bytes", maxHead)
		}
	}
	if len(b) < 2 || b[0] != '8' || b[1] != '=' {
		return nil, errorf(true, "the message does not begin with BeginString (8)")
	}
	i := indexSOH(b) + 1
	if len(b) < i+2 || b[i] != '9' || b[i+1] != '=' {
		return nil, errorf(true, "BodyLength (9) is not the second field")
	}
	n, ok := atoi(b[i+2 : len(b)-1])
	if !ok {
		return nil, errorf(true, "BodyLength %q is not a number", b[i+2:len(b)-1])
	}
	if n > max {
		return nil, ErrTooLarge
	}
	// The body, then the trailer "10=nnn<SOH>".
	start := len(b)
	b = slices.Grow(b, n+7)[:start+n+7]
	if _, err := io.ReadFull(r.br, b[start:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.buf = b
	return b, nil
}

// Field is one tag=value pair; Value aliases the message's bytes.
type Field struct {
	Tag   int
	Value []byte
}

// Message is a parsed message: its fields in order, BeginString,
// BodyLength and CheckSum included.
type Message struct {
	Fields []Field
}

// Parse checks raw (a whole message as Reader.Next returns it) and reads
// its fields into m, whose Values alias raw. quick skips the checks of
// the fields the framing does not need: the checksum's value, the
// tags' syntax past the header [M: what BIG-IP's quick-parsing skips is
// not documented].
func (m *Message) Parse(raw []byte, quick bool) error {
	m.Fields = m.Fields[:0]
	if len(raw) == 0 || raw[len(raw)-1] != SOH {
		return errorf(false, "the message does not end with SOH")
	}
	for p := 0; p < len(raw); {
		end := p + indexSOH(raw[p:])
		eq := -1
		for j := p; j < end; j++ {
			if raw[j] == '=' {
				eq = j
				break
			}
		}
		if eq <= p {
			return errorf(false, "field %q is not tag=value", raw[p:end])
		}
		tag, ok := atoi(raw[p:eq])
		if !ok || tag == 0 {
			return errorf(false, "tag %q is not a positive number", raw[p:eq])
		}
		m.Fields = append(m.Fields, Field{Tag: tag, Value: raw[eq+1 : end]})
		p = end + 1
	}
	f := m.Fields
	if len(f) < 4 || f[0].Tag != TagBeginString || f[1].Tag != TagBodyLength {
		return errorf(false, "the header is not BeginString (8), BodyLength (9)")
	}
	if f[2].Tag != TagMsgType {
		return errorf(false, "MsgType (35) is not the third field")
	}
	last := f[len(f)-1]
	if last.Tag != TagCheckSum || len(last.Value) != 3 {
		return errorf(false, "the message does not end with a three-digit CheckSum (10)")
	}
	bodyStart := len(f[0].Value) + len(f[1].Value) + 6
	bodyEnd := len(raw) - 7
	n, _ := atoi(f[1].Value)
	if n != bodyEnd-bodyStart {
		return errorf(false, "BodyLength %d, the body is %d bytes", n, bodyEnd-bodyStart)
	}
	if quick {
		return nil
	}
	sum, ok := atoi(last.Value)
	if !ok || sum != Checksum(raw[:bodyEnd]) {
		return errorf(false, "CheckSum %s, the message sums to %03d", last.Value, Checksum(raw[:bodyEnd]))
	}
	return nil
}

// Checksum is the sum of b's bytes modulo 256, as tag 10 carries it.
func Checksum(b []byte) int {
	var s uint
	for _, c := range b {
		s += uint(c)
	}
	return int(s % 256)
}

// Get is tag's first value; false when the message lacks it.
func (m *Message) Get(tag int) ([]byte, bool) {
	for i := range m.Fields {
		if m.Fields[i].Tag == tag {
			return m.Fields[i].Value, true
		}
	}
	return nil, false
}

// MsgType is the message's tag 35.
func (m *Message) MsgType() string {
	if len(m.Fields) > 2 {
		return string(m.Fields[2].Value)
	}
	return ""
}

// Remap renumbers the body's tags found in tags (tags 8, 9, 10 and 35
// are never renumbered); it reports whether any changed.
func (m *Message) Remap(tags map[int]int) bool {
	if len(tags) == 0 {
		return false
	}
	changed := false
	for i := 2; i < len(m.Fields)-1; i++ {
		if header(m.Fields[i].Tag) {
			continue
		}
		if to, ok := tags[m.Fields[i].Tag]; ok && to != m.Fields[i].Tag {
			m.Fields[i].Tag = to
			changed = true
		}
	}
	return changed
}

// Encode appends the message to dst with BodyLength and CheckSum
// computed again, as a message must leave after its tags were edited.
func (m *Message) Encode(dst []byte) []byte {
	start := len(dst)
	var begin []byte
	if len(m.Fields) > 0 && m.Fields[0].Tag == TagBeginString {
		begin = m.Fields[0].Value
	}
	n := 0
	for _, f := range m.body() {
		n += digits(f.Tag) + 1 + len(f.Value) + 1
	}
	dst = append(dst, "8="...)
	dst = append(dst, begin...)
	dst = append(dst, SOH, '9', '=')
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, SOH)
	for _, f := range m.body() {
		dst = strconv.AppendInt(dst, int64(f.Tag), 10)
		dst = append(dst, '=')
		dst = append(dst, f.Value...)
		dst = append(dst, SOH)
	}
	sum := Checksum(dst[start:])
	return append(dst, '1', '0', '=', byte('0'+sum/100), byte('0'+sum/10%10), byte('0'+sum%10), SOH)
}

// body is the fields between BodyLength and CheckSum.
func (m *Message) body() []Field {
	f := m.Fields
	i, j := 0, len(f)
	for i < j && (f[i].Tag == TagBeginString || f[i].Tag == TagBodyLength) && i < 2 {
		i++
	}
	if j > i && f[j-1].Tag == TagCheckSum {
		j--
	}
	return f[i:j]
}

func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

func indexSOH(b []byte) int {
	for i, c := range b {
		if c == SOH {
			return i
		}
	}
	return len(b)
}

// atoi reads a non-negative decimal of at most 9 digits.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
