package rtsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds of a message when the profile names none.
const (
	// DefaultMaxHeader is max-header-size's default: a message's start
	// line and headers.
	DefaultMaxHeader = 4096
	// DefaultMaxBody bounds a message's body (max-queued-data's default
	// [M: the body is what the gateway queues before it passes it on]).
	DefaultMaxBody = 32768
)

// Errors of the message reader. A stream that gives one cannot be
// followed past it: the proxy resets the connection.
var (
	ErrHeaderTooLarge = errors.New("rtsp: message header larger than max-header-size")
	ErrBodyTooLarge   = errors.New("rtsp: message body larger than max-queued-data")
	ErrMalformed      = errors.New("rtsp: malformed message")
)

// Field is one header line.
type Field struct {
	Name, Value string
}

// Message is one RTSP request or response: its start line, headers and
// body. Headers keep their order and case; lookups ignore case.
type Message struct {
	// Request: Method, URI and Version are the start line's; a response
	// has Version, Status and Reason.
	Request bool
	Method  string
	URI     string
	Version string
	Status  int
	Reason  string
	Fields  []Field
	Body    []byte
}

// Get is the first value of header name, and whether there is one.
func (m *Message) Get(name string) (string, bool) {
	for _, f := range m.Fields {
		if strings.EqualFold(f.Name, name) {
			return f.Value, true
		}
	}
	return "", false
}

// Values is every value of header name, in order.
func (m *Message) Values(name string) []string {
	var out []string
	for _, f := range m.Fields {
		if strings.EqualFold(f.Name, name) {
			out = append(out, f.Value)
		}
	}
	return out
}

// Set replaces the first header name's value (removing the others), or
// adds the header at the end.
func (m *Message) Set(name, value string) {
	for i := range m.Fields {
		if strings.EqualFold(m.Fields[i].Name, name) {
			m.Fields[i].Value = value
			m.removeFrom(name, i+1)
			return
		}
	}
	m.Fields = append(m.Fields, Field{name, value})
}

// Add appends a header, leaving those of the same name.
func (m *Message) Add(name, value string) { m.Fields = append(m.Fields, Field{name, value}) }

// Remove deletes every header name.
func (m *Message) Remove(name string) { m.removeFrom(name, 0) }

func (m *Message) removeFrom(name string, from int) {
	out := m.Fields[:from]
	for _, f := range m.Fields[from:] {
		if !strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	m.Fields = out
}

// CSeq is the message's sequence number, -1 without a readable one.
func (m *Message) CSeq() int {
	v, ok := m.Get("CSeq")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	return n
}

// Session is the Session header's identifier, without its ;timeout=
// parameter; "" without one.
func (m *Message) Session() string {
	v, _ := m.Get("Session")
	id, _, _ := strings.Cut(v, ";")
	return strings.TrimSpace(id)
}

// Encode appends the message as it goes on the wire, Content-Length
// set to the body's length when the body is not empty or the header was
// there.
func (m *Message) Encode(dst []byte) []byte {
	if m.Request {
		dst = append(dst, m.Method...)
		dst = append(dst, ' ')
		dst = append(dst, m.URI...)
		dst = append(dst, ' ')
		dst = append(dst, m.Version...)
	} else {
		dst = append(dst, m.Version...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(m.Status), 10)
		dst = append(dst, ' ')
		dst = append(dst, m.Reason...)
	}
	dst = append(dst, "\r\n"...)
	hasLen := false
	for _, f := range m.Fields {
		if strings.EqualFold(f.Name, "Content-Length") {
			if hasLen {
				continue
			}
			hasLen = true
			f.Value = strconv.Itoa(len(m.Body))
		}
		dst = append(dst, f.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, f.Value...)
		dst = append(dst, "\r\n"...)
	}
	if !hasLen && len(m.Body) > 0 {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(m.Body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, m.Body...)
}

// Parse reads a message's head (start line and headers, without the
// blank line) into m; the body is the caller's.
func (m *Message) Parse(head string) error {
	*m = Message{Fields: m.Fields[:0]}
	lines := strings.Split(strings.ReplaceAll(head, "\r\n", "\n"), "\n")
	start := strings.TrimRight(lines[0], "\r")
	a, rest, ok1 := strings.Cut(start, " ")
	b, c, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || a == "" || b == "" {
		return fmt.Errorf("%w: start line %q", ErrMalformed, start)
	}
	if strings.HasPrefix(a, "RTSP/") {
		st, err := strconv.Atoi(b)
		if err != nil || st < 100 || st > 999 {
			return fmt.Errorf("%w: status %q", ErrMalformed, b)
		}
		m.Version, m.Status, m.Reason = a, st, c
	} else {
		if !strings.HasPrefix(c, "RTSP/") || !isToken(a) || strings.ContainsAny(c, " \t") {
			return fmt.Errorf("%w: request line %q", ErrMalformed, start)
		}
		m.Request, m.Method, m.URI, m.Version = true, a, b, c
	}
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		if (l[0] == ' ' || l[0] == '\t') && len(m.Fields) > 0 {
			// A folded line continues the last header (RFC 2326 4.2's
			// HTTP/1.1 syntax).
			m.Fields[len(m.Fields)-1].Value += " " + strings.TrimSpace(l)
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || !isToken(name) {
			return fmt.Errorf("%w: header line %q", ErrMalformed, l)
		}
		m.Fields = append(m.Fields, Field{name, strings.TrimSpace(value)})
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// Reader reads a control connection's stream: messages and, between
// them, interleaved binary frames (RFC 2326 10.12: '$', a channel, a
// 16-bit length and the data), which pass untouched.
type Reader struct {
	R *bufio.Reader
	// MaxHeader and MaxBody bound a message; 0: the defaults.
	MaxHeader, MaxBody int
	head               []byte
}

// NewReader reads r with the profile's bounds.
func NewReader(r io.Reader, maxHeader, maxBody int) *Reader {
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeader
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	return &Reader{R: bufio.NewReaderSize(r, 4096), MaxHeader: maxHeader, MaxBody: maxBody}
}

// Next reads the next unit of the stream. A frame is returned whole in
// frame (with its 4-byte prefix) and m is untouched; otherwise the
// message is parsed into m, its body read by Content-Length. The
// returned slices are valid until the next call.
func (r *Reader) Next(m *Message) (frame []byte, err error) {
	for {
		b, err := r.R.Peek(1)
		if err != nil {
			return nil, err
		}
		switch b[0] {
		case '$':
			return r.frame()
		case '\r', '\n':
			r.R.ReadByte() // blank lines between messages are allowed
			continue
		}
		return nil, r.message(m)
	}
}

func (r *Reader) frame() ([]byte, error) {
	h, err := r.R.Peek(4)
	if err != nil {
		return nil, unexpected(err)
	}
	n := 4 + (int(h[2])<<8 | int(h[3]))
	if cap(r.head) < n {
		r.head = make([]byte, n)
	}
	buf := r.head[:n]
	if _, err := io.ReadFull(r.R, buf); err != nil {
		return nil, unexpected(err)
	}
	return buf, nil
}

func (r *Reader) message(m *Message) error {
	r.head = r.head[:0]
	for {
		line, err := r.R.ReadSlice('\n')
		if len(r.head)+len(line) > r.MaxHeader {
			return ErrHeaderTooLarge
		}
		if err == bufio.ErrBufferFull {
			r.head = append(r.head, line...)
			continue
		}
		if err != nil {
			return unexpected(err)
		}
		if len(line) <= 2 && (line[0] == '\n' || line[0] == '\r') {
			break
		}
		r.head = append(r.head, line...)
	}
	if err := m.Parse(string(r.head)); err != nil {
		return err
	}
	n := 0
	if v, ok := m.Get("Content-Length"); ok {
		var err error
		if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 0 {
			return fmt.Errorf("%w: Content-Length %q", ErrMalformed, v)
		}
	}
	if n > r.MaxBody {
		return ErrBodyTooLarge
	}
	if n > 0 {
		m.Body = make([]byte, n)
		if _, err := io.ReadFull(r.R, m.Body); err != nil {
			return unexpected(err)
		}
	}
	return nil
}

// unexpected is an end of stream inside a unit.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Reason is a status code's reason phrase (RFC 2326 7.1.1), for the
// answers the gateway writes itself.
func Reason(code int) string {
	switch code {
	case 200:
		return "OK"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 451:
		return "Parameter Not Understood"
	case 453:
		return "Not Enough Bandwidth"
	case 454:
		return "Session Not Found"
	case 455:
		return "Method Not Valid in This State"
	case 461:
		return "Unsupported Transport"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 503:
		return "Service Unavailable"
	}
	switch code / 100 {
	case 1:
		return "Continue"
	case 2:
		return "OK"
	case 3:
		return "Redirect"
	case 4:
		return "Client Error"
	}
	return "Server Error"
}
