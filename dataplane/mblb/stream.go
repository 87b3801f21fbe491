package mblb

import "net"

// stream is the receive side of one connection: a pooled buffer holding the
// bytes of the message in progress (and any that follow it), read in large
// chunks and cut into messages by a framer without moving bytes more than
// once per read.
type stream struct {
	buf        *msg
	start, end int // unconsumed bytes: buf.b[start:end]
	fr         Framer
	max        int // MaxMessageSize
	want       int // known size of the message in progress, 0 when unknown
	// more: the latest read filled the free tail, so more bytes may be
	// waiting in the socket. An HTTP message whose head is in and whose
	// body is not waits for them; once the socket is drained its body
	// streams instead (http.go, upload.go).
	more bool
}

func newStream(fr Framer, max int) stream {
	b := getMsg(readSize)
	b.b = b.b[:cap(b.b)]
	return stream{buf: b, fr: fr, max: max}
}

func (st *stream) release() {
	if st.buf != nil {
		st.buf.unref()
		st.buf = nil
	}
}

// prepare makes room for the next read: it rewinds an empty buffer, moves a
// partial message to the front when the tail is short, and grows the buffer
// to a message's known size (or doubles it) up to the message limit.
func (st *stream) prepare() error {
	b := st.buf
	if st.start == st.end {
		st.start, st.end = 0, 0
		if len(b.b) > readSize && st.want == 0 {
			// A large message has gone: give its buffer back rather than
			// keep a megabyte per idle client.
			b.unref()
			st.buf = getMsg(readSize)
			st.buf.b = st.buf.b[:cap(st.buf.b)]
			return nil
		}
	}
	used := st.end - st.start
	want := used + 1
	if st.want > want {
		want = st.want
	}
	if st.start > 0 && (st.start+want > len(b.b) || len(b.b)-st.end < 4096) {
		copy(b.b, b.b[st.start:st.end])
		st.start, st.end = 0, used
	}
	if st.start+want <= len(b.b) {
		return nil
	}
	if used > st.max {
		return ErrTooLarge
	}
	n := 2 * len(b.b)
	if n < want {
		n = want
	}
	if limit := st.max + readSize; n > limit {
		n = limit
	}
	st.buf = b.grow(st.end, n)
	return nil
}

// read reads once into the free tail.
func (st *stream) read(c net.Conn) (int, error) {
	if err := st.prepare(); err != nil {
		return 0, err
	}
	space := st.buf.b[st.end:]
	k, err := c.Read(space)
	st.end += k
	st.more = k == len(space)
	return k, err
}

// next returns the next complete message, nil when more bytes are needed.
// The slice is valid until the next read.
func (st *stream) next() ([]byte, error) {
	if st.start == st.end {
		return nil, nil
	}
	size, ok, err := st.fr.Frame(st.buf.b[st.start:st.end])
	if err != nil {
		return nil, err
	}
	if !ok {
		st.want = size
		if size == 0 && st.end-st.start > st.max {
			return nil, ErrTooLarge
		}
		return nil, nil
	}
	st.want = 0
	b := st.buf.b[st.start : st.start+size]
	st.start += size
	return b, nil
}

// pending returns the collected bytes not yet consumed.
func (st *stream) pending() []byte { return st.buf.b[st.start:st.end] }
