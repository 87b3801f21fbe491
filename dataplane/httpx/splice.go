package httpx

import (
	"errors"
	"strconv"
)

// Splicing: a rule collected the start of a streamed body (HTTP::collect
// N), replaced some of it (HTTP::payload replace), and the rest of the
// body streams on unchanged. Splice takes the collected bytes off the
// stream and gives what goes out in their place, framed so that it and
// the rest of the body make one valid body: with a Content-Length the
// replacement itself (the caller adjusts the header by the difference,
// SetContentLength); chunked, the replacement as one chunk, then the
// size line of what is left of the chunk the collect ended in, after
// which the original chunks follow as they arrive.

// ErrSpliceShort is Splice asked for more collected bytes than b holds,
// or than the body has.
var ErrSpliceShort = errors.New("httpx: the collected part of a streamed body is not all there")

// Splice consumes, from b (the body bytes of a streamed request that
// have arrived, from the first after the head), the bytes carrying its
// first k data bytes (de-chunked), and appends to dst what replaces
// them: repl, framed as the body's framing needs. n is how many bytes
// of b were consumed: the caller drops them and hands what follows to
// Body as usual, calling Eat first (see Eat). When they were all of a
// Content-Length body (BodyLeft 0), Body(nil) ends it.
func (f *RequestFramer) Splice(dst, b []byte, k int, repl []byte) (out []byte, n int, err error) {
	if f.state != stStreamFixed && f.state != stStreamChunked {
		return dst, 0, ErrBadMessage
	}
	return splice(dst, f.state, &f.left, &f.cs, b, k, repl)
}

// Splice is RequestFramer.Splice for a streamed response (by its
// Content-Length, chunked, or until the member closes).
func (f *ResponseFramer) Splice(dst, b []byte, k int, repl []byte) (out []byte, n int, err error) {
	switch f.state {
	case stStreamClose:
		if k > len(b) {
			return dst, 0, ErrSpliceShort
		}
		return append(dst, repl...), k, nil
	case stStreamFixed, stStreamChunked:
		return splice(dst, f.state, &f.left, &f.cs, b, k, repl)
	}
	return dst, 0, ErrBadMessage
}

// Eat drops, from the start of b, the line end of the chunk whose data
// a Splice consumed to its last byte when that line end had not all
// arrived: the replacement's chunk carries its own, so the original's
// must not follow it. n bytes of b are the caller's to drop; 0 when
// nothing is owed. Call it before every Body after a Splice (it costs a
// comparison).
func (f *RequestFramer) Eat(b []byte) (n int, err error) { return f.cs.eat(b) }

// Eat is RequestFramer.Eat for a streamed response.
func (f *ResponseFramer) Eat(b []byte) (n int, err error) { return f.cs.eat(b) }

func splice(dst []byte, state int, left *int64, cs *chunkStream, b []byte, k int, repl []byte) ([]byte, int, error) {
	if k < 0 {
		return dst, 0, ErrSpliceShort
	}
	if state == stStreamFixed {
		// k may take the whole body: BodyLeft is then 0, and a Body
		// call (with no bytes) ends it.
		if k > len(b) || int64(k) > *left {
			return dst, 0, ErrSpliceShort
		}
		*left -= int64(k)
		return append(dst, repl...), k, nil
	}
	n, err := cs.skipData(b, k)
	if err != nil {
		return dst, 0, err
	}
	if len(repl) > 0 {
		dst = strconv.AppendInt(dst, int64(len(repl)), 16)
		dst = append(dst, "\r\n"...)
		dst = append(dst, repl...)
		dst = append(dst, "\r\n"...)
	}
	switch cs.state {
	case csData:
		// The collect ended inside a chunk: what is left of it goes
		// out as a chunk of its own.
		dst = strconv.AppendInt(dst, cs.left, 16)
		dst = append(dst, "\r\n"...)
	case csDataEnd:
		cs.eating = true // its line end is still to come (Eat)
	}
	return dst, n, nil
}

// skipData consumes the bytes of b that carry the next k data bytes,
// with the size lines before them, and the line end after the last one
// as far as it has arrived.
func (c *chunkStream) skipData(b []byte, k int) (n int, err error) {
	for k > 0 {
		if c.state == csData {
			m := min(int64(k), c.left, int64(len(b)-n))
			if m == 0 {
				return n, ErrSpliceShort
			}
			c.left -= m
			n += int(m)
			k -= int(m)
			if c.left == 0 {
				c.state = csDataEnd
			}
			continue
		}
		if n >= len(b) || c.state == csTrailer {
			return n, ErrSpliceShort
		}
		d, done, err := c.feed(b[n : n+1])
		n += d
		if err != nil {
			return n, err
		}
		if done {
			return n, ErrSpliceShort
		}
	}
	for c.state == csDataEnd && n < len(b) {
		d, _, err := c.feed(b[n : n+1])
		n += d
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// eat is Eat on the chunk stream.
func (c *chunkStream) eat(b []byte) (n int, err error) {
	if !c.eating {
		return 0, nil
	}
	for c.state == csDataEnd && n < len(b) {
		d, _, err := c.feed(b[n : n+1])
		n += d
		if err != nil {
			return n, err
		}
	}
	if c.state != csDataEnd {
		c.eating = false
	}
	return n, nil
}

// ChunkedDataLen is how many data bytes the start of a chunked body b
// (as it has arrived, the last chunk possibly cut short) carries: what
// DechunkPrefix would give, without copying it.
func ChunkedDataLen(b []byte) int {
	n, _ := ChunkedData(b)
	return n
}

// ChunkedData is ChunkedDataLen, and whether the last chunk's size line
// (the zero) is in: the body's data is then all there, and a rule that
// collects more than it carries gets what there is.
func ChunkedData(b []byte) (n int, ended bool) {
	for i := 0; i < len(b); {
		l, next, whole := fullLine(b, i)
		if !whole {
			break
		}
		size, err := chunkSize(l)
		if err != nil {
			break
		}
		if size == 0 {
			return n, true
		}
		end := min(next+size, len(b))
		n += end - next
		i = end
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
	}
	return n, false
}
