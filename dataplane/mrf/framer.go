package mrf

import (
	"bytes"
	"errors"
	"io"
)

// ErrTooLarge is a message longer than the protocol's max-message-size:
// BIG-IP resets the connection that sent it.
var ErrTooLarge = errors.New("message exceeds max-message-size")

// Reader cuts a byte stream into messages. With a terminator a message is
// the bytes before it (the terminator is taken off and put back as the
// message leaves, so a rule sees and edits the text alone [M]); without
// one the parser does not separate the stream (F5: "the generic message
// parser will not separate the input stream into messages") and each read
// is one message.
type Reader struct {
	R io.Reader
	// Term is the message-terminator (nil: none).
	Term []byte
	// Max bounds a message (0: no bound).
	Max int
	// F, when set, frames the stream instead of Term (a protocol's
	// messages: SIP on Content-Length, Diameter on its header's length).
	F Framer
	// Datagram: R is a UDP flow; each read is one message, whatever
	// Term and F say (RFC 3261 §18.3: a datagram is one SIP message).
	Datagram bool
	buf      []byte
	off      int
	tmp      []byte
}

// Next returns the next message; it is valid until the next call. At the
// end of the stream a partial message (no terminator yet) is dropped and
// io.EOF returned.
func (r *Reader) Next() ([]byte, error) {
	if r.F != nil && !r.Datagram {
		return r.framed()
	}
	if len(r.Term) == 0 || r.Datagram {
		if r.tmp == nil {
			n := 16 << 10
			if r.Datagram {
				n = maxDatagram
			} else if r.Max > 0 && r.Max < n {
				n = r.Max
			}
			r.tmp = make([]byte, n)
		}
		for {
			n, err := r.R.Read(r.tmp)
			if n > 0 {
				// A datagram's own terminator is the message's end, as
				// in a stream [M].
				return bytes.TrimSuffix(r.tmp[:n], r.Term), nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for {
		if m, ok, err := r.cut(); ok || err != nil {
			return m, err
		}
		if err := r.fill(4096); err != nil {
			return nil, err
		}
	}
}

// framed is Next with a Framer: the buffer grows to the length the
// framer says the message has, and is reused message after message.
func (r *Reader) framed() ([]byte, error) {
	for {
		p := r.buf[r.off:]
		if len(p) > 0 {
			n, ok, err := r.F.Frame(p)
			if err != nil {
				return nil, err
			}
			if r.Max > 0 && n > r.Max {
				return nil, ErrTooLarge
			}
			if ok {
				r.off += n
				return p[:n:n], nil
			}
			if need := r.off + n; need > cap(r.buf) {
				nb := make([]byte, len(r.buf)-r.off, n+4096)
				copy(nb, p)
				r.buf, r.off = nb, 0
			}
		}
		if err := r.fill(1024); err != nil {
			return nil, err
		}
	}
}

// fill moves what is left of the buffer to its start, grows it when
// less than room bytes are free, and reads once more into it; the
// error is the read's when it gave nothing (io.EOF for a stream cut
// short).
func (r *Reader) fill(room int) error {
	if r.off > 0 {
		n := copy(r.buf, r.buf[r.off:])
		r.buf, r.off = r.buf[:n], 0
	}
	if cap(r.buf)-len(r.buf) < room {
		nb := make([]byte, len(r.buf), 2*cap(r.buf)+4096)
		copy(nb, r.buf)
		r.buf = nb
	}
	n, err := r.R.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	if n == 0 && err != nil {
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return err
	}
	return nil
}

// cut takes one message off the buffer when a terminator is in it.
func (r *Reader) cut() ([]byte, bool, error) {
	p := r.buf[r.off:]
	i := bytes.Index(p, r.Term)
	if i < 0 {
		if r.Max > 0 && len(p) > r.Max+len(r.Term) {
			return nil, false, ErrTooLarge
		}
		return nil, false, nil
	}
	if r.Max > 0 && i > r.Max {
		return nil, false, ErrTooLarge
	}
	r.off += i + len(r.Term)
	return p[:i:i], true, nil
}

// maxDatagram is the largest UDP payload.
const maxDatagram = 65535

// Frame appends m as it goes on the wire (with the terminator) to dst.
func Frame(dst, m, term []byte) []byte {
	dst = append(dst, m...)
	return append(dst, term...)
}
