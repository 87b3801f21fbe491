package httpx

// The framers find where each message of a stream ends. They follow the
// message engine's contract: Frame sees the bytes collected since the
// previous message ended; after a complete answer exactly size bytes are
// removed, otherwise bytes are only appended, so a framer resumes its scan
// where it stopped and a large chunked body costs linear time.

const (
	stHeader = iota
	stFixed
	stChunked
	stUntilClose
	// The body of a streamed response: counted down, chunked, or up to
	// the close (ResponseFramer.Body).
	stStreamFixed
	stStreamChunked
	stStreamClose
)

// maxChunkLine bounds a chunk-size line (size and extensions).
const maxChunkLine = 4096

// chunks scans a chunked body.
type chunks struct {
	pos      int // start of the next chunk-size line or trailer line
	trailers bool
}

// scan advances over complete chunks; it returns the message end when the
// last chunk and trailers are in, else 0 and a size hint (where the chunk
// being received ends).
func (c *chunks) scan(b []byte, max int) (end, hint int, err error) {
	for {
		if max > 0 && c.pos > max {
			return 0, 0, ErrBodyTooLarge
		}
		l, next, whole := fullLine(b, c.pos)
		if !whole {
			if len(l) > maxChunkLine {
				return 0, 0, ErrBadMessage
			}
			return 0, 0, nil
		}
		if c.trailers {
			if len(l) == 0 {
				return next, 0, nil
			}
			if len(l) > maxChunkLine*4 {
				return 0, 0, ErrBadMessage
			}
			c.pos = next
			continue
		}
		var size int64
		digits := 0
		for _, ch := range l {
			var v byte
			switch {
			case ch >= '0' && ch <= '9':
				v = ch - '0'
			case ch >= 'a' && ch <= 'f':
				v = ch - 'a' + 10
			case ch >= 'A' && ch <= 'F':
				v = ch - 'A' + 10
			default:
				goto ext
			}
			if digits == 15 {
				return 0, 0, ErrBadMessage
			}
			size = size<<4 | int64(v)
			digits++
			continue
		ext:
			if ch != ';' && ch != ' ' && ch != '\t' {
				return 0, 0, ErrBadMessage
			}
			break
		}
		if digits == 0 {
			return 0, 0, ErrBadMessage
		}
		if size == 0 {
			c.trailers = true
			c.pos = next
			continue
		}
		dataEnd := int64(next) + size
		if max > 0 && dataEnd > int64(max) {
			return 0, 0, ErrBodyTooLarge
		}
		if int64(len(b)) < dataEnd+2 {
			if int64(len(b)) == dataEnd+1 && b[dataEnd] == '\n' {
				c.pos = int(dataEnd) + 1
				continue
			}
			return 0, int(dataEnd) + 2, nil
		}
		switch {
		case b[dataEnd] == '\r' && b[dataEnd+1] == '\n':
			c.pos = int(dataEnd) + 2
		case b[dataEnd] == '\n':
			c.pos = int(dataEnd) + 1
		default:
			return 0, 0, ErrBadMessage
		}
	}
}

// fullLine is line, and whether the line's end has arrived.
func fullLine(b []byte, i int) (l []byte, next int, whole bool) {
	if i >= len(b) {
		return nil, i, false
	}
	l, next = line(b, i)
	return l, next, b[next-1] == '\n'
}

// RequestFramer frames the requests of one client stream.
type RequestFramer struct {
	// MaxHeader bounds a header block (0: DefaultMaxHeader); Max bounds a
	// whole message (0: no bound); MaxFields bounds the header fields of
	// one message (0: no bound).
	MaxHeader, Max, MaxFields int
	// Stream lets a request whose body would pass Max (an upload) go
	// through in parts instead of failing: Frame then returns
	// ErrStreamBody with the head in Streaming, and Body cuts the rest
	// as it arrives (upload.go).
	Stream bool

	state   int
	scanned int
	lineOK  bool
	head    Head
	ch      chunks
	last    Head
	sameBuf bool // head's views point into the current call's buffer
	left    int64
	cs      chunkStream
}

// Last is the head of the message the latest complete Frame found. Its
// Method is a view into that call's buffer.
func (f *RequestFramer) Last() *Head { return &f.last }

// Waiting is the head of a request whose head has arrived and whose body
// has not (nil otherwise): a proxy answers its Expect: 100-continue. Its
// Method is stale once the buffer moved; the other facts hold.
func (f *RequestFramer) Waiting() *Head {
	if f.state == stHeader {
		return nil
	}
	return &f.head
}

func (f *RequestFramer) maxHeader() int {
	if f.MaxHeader > 0 {
		return f.MaxHeader
	}
	return DefaultMaxHeader
}

// Frame implements the engine's framer.
func (f *RequestFramer) Frame(buf []byte) (int, bool, error) {
	f.sameBuf = false
	if f.state == stHeader {
		if !f.lineOK {
			// Check the request line as soon as it is whole, so that
			// garbage is refused at once rather than after 32 KiB.
			l, _, whole := fullLine(buf, 0)
			if !whole {
				if len(buf) > f.maxHeader() {
					return 0, false, ErrHeaderTooLarge
				}
				return 0, false, nil
			}
			var h Head
			if !parseRequestLine(l, &h) {
				return 0, false, ErrBadMessage
			}
			f.lineOK = true
		}
		end := headerEnd(buf, f.scanned-3)
		if end < 0 {
			f.scanned = len(buf)
			if len(buf) > f.maxHeader() {
				return 0, false, ErrHeaderTooLarge
			}
			return 0, false, nil
		}
		if end > f.maxHeader() {
			return 0, false, ErrHeaderTooLarge
		}
		h, err := ParseRequest(buf)
		if err != nil {
			return 0, false, err
		}
		if f.MaxFields > 0 && h.Fields > f.MaxFields {
			return 0, false, ErrTooManyHeaders
		}
		f.head, f.sameBuf = h, true
		switch {
		case h.Chunked:
			f.state = stChunked
			f.ch = chunks{pos: end}
		default:
			f.state = stFixed
		}
	}
	switch f.state {
	case stFixed:
		n := int64(f.head.HeaderEnd)
		if f.head.ContentLength > 0 {
			n += f.head.ContentLength
		}
		if f.Max > 0 && n > int64(f.Max) {
			return f.tooLarge()
		}
		if int64(len(buf)) < n {
			return int(n), false, nil
		}
		return f.done(buf, int(n))
	case stChunked:
		end, hint, err := f.ch.scan(buf, f.Max)
		if err == ErrBodyTooLarge {
			return f.tooLarge()
		}
		if err != nil || end == 0 {
			return hint, false, err
		}
		return f.done(buf, end)
	case stStreamFixed, stStreamChunked:
		return 0, false, ErrStreamBody
	}
	return 0, false, ErrBadMessage
}

func (f *RequestFramer) done(buf []byte, n int) (int, bool, error) {
	if f.sameBuf {
		f.last = f.head
	} else {
		// The buffer may have moved since the head was parsed: parse it
		// again where it is now, so Last's views are current.
		h, err := ParseRequest(buf[:n])
		if err != nil {
			return 0, false, err
		}
		f.last = h
	}
	f.state, f.scanned, f.lineOK, f.head = stHeader, 0, false, Head{}
	return n, true, nil
}

// ResponseFramer frames the responses of one server stream. A response
// whose body runs to the connection's close completes at Finish.
type ResponseFramer struct {
	MaxHeader, Max, MaxFields int
	// HeadRequest reports whether the request the next response answers
	// is HEAD (its response has no body whatever its headers say), and
	// whether it is CONNECT (a 2xx answer has no body either: the
	// tunnel follows).
	HeadRequest func() (head, connect bool)
	// Stream lets a response whose body would pass Max go through in
	// parts instead of failing: Frame then returns ErrStreamBody with
	// the head in Streaming, and Body cuts the rest as it arrives.
	Stream bool

	state   int
	left    int64 // body bytes still to come (stStreamFixed)
	cs      chunkStream
	base    int // start of the current header block (after 1xx ones)
	scanned int
	head    Head
	ch      chunks
	last    Head
}

// Last is the head of the latest complete response (its final block).
func (f *ResponseFramer) Last() *Head { return &f.last }

// Frame implements the engine's framer.
func (f *ResponseFramer) Frame(buf []byte) (int, bool, error) {
	max := f.MaxHeader
	if max <= 0 {
		max = DefaultMaxHeader
	}
	for f.state == stHeader {
		b := buf[f.base:]
		end := headerEnd(b, f.scanned-3)
		if end < 0 {
			f.scanned = len(b)
			if len(b) > max {
				return 0, false, ErrHeaderTooLarge
			}
			if len(b) >= 12 {
				var h Head
				if l, _ := line(b, 0); !parseStatusLine(l[:min(len(l), 12)], &h) {
					return 0, false, ErrBadMessage
				}
			}
			return 0, false, nil
		}
		if end > max {
			return 0, false, ErrHeaderTooLarge
		}
		h, err := ParseResponse(b)
		if err != nil {
			return 0, false, err
		}
		if f.MaxFields > 0 && h.Fields > f.MaxFields {
			return 0, false, ErrTooManyHeaders
		}
		if h.Status < 200 && h.Status != 101 {
			// Interim (100 Continue, 103 Early Hints): it travels with the
			// final response, which is what answers the request.
			f.base += end
			f.scanned = 0
			continue
		}
		h.Start = f.base
		h.HeaderEnd += f.base
		h.Method = nil
		f.head = h
		head, connect := false, false
		if f.HeadRequest != nil {
			head, connect = f.HeadRequest()
		}
		switch {
		case h.Status < 200 || h.Status == 204 || h.Status == 304 || head ||
			(connect && h.Status < 300):
			f.state = stFixed
			f.head.ContentLength = 0
		case h.Chunked:
			f.state = stChunked
			f.ch = chunks{pos: h.HeaderEnd}
		case h.ContentLength >= 0:
			f.state = stFixed
		default:
			f.state = stUntilClose
			f.head.UntilClose = true
		}
	}
	switch f.state {
	case stFixed:
		n := int64(f.head.HeaderEnd) + f.head.ContentLength
		if f.Max > 0 && n > int64(f.Max) && (!f.Stream || int64(len(buf)) < n) {
			// (Streaming a message that is already whole would leave
			// an empty body to wait for.)
			return f.tooLarge()
		}
		if int64(len(buf)) < n {
			return int(n), false, nil
		}
		return f.done(int(n))
	case stChunked:
		end, hint, err := f.ch.scan(buf, f.Max)
		if err == ErrBodyTooLarge {
			return f.tooLarge()
		}
		if err != nil || end == 0 {
			return hint, false, err
		}
		return f.done(end)
	case stUntilClose:
		if f.Max > 0 && len(buf) > f.Max {
			return f.tooLarge()
		}
		return 0, false, nil
	case stStreamFixed, stStreamChunked, stStreamClose:
		return 0, false, ErrStreamBody
	}
	return 0, false, ErrBadMessage
}

// tooLarge is the answer to a body over Max: an error, or with Stream
// the switch to streaming it. The head stays where Frame found it (the
// caller forwards buf[:Streaming().HeaderEnd] and hands the bytes after
// it to Body).
func (f *ResponseFramer) tooLarge() (int, bool, error) {
	if !f.Stream {
		return 0, false, ErrBodyTooLarge
	}
	switch f.state {
	case stFixed:
		f.state, f.left = stStreamFixed, f.head.ContentLength
	case stChunked:
		f.state, f.cs = stStreamChunked, chunkStream{}
	default:
		f.state = stStreamClose
	}
	return 0, false, ErrStreamBody
}

// Streaming is the head of the response being streamed (nil when none
// is): its Start and HeaderEnd count from the start of the buffer Frame
// saw when it switched.
func (f *ResponseFramer) Streaming() *Head {
	switch f.state {
	case stStreamFixed, stStreamChunked, stStreamClose:
		return &f.head
	}
	return nil
}

// Body cuts the next part of a streamed body from b, the bytes that
// followed the previous part (the first time, those after the head): n
// of them belong to the body, and done says the response ended with
// them (the framer then frames the next response). A body that runs to
// the close never ends here: Finish ends it.
func (f *ResponseFramer) Body(b []byte) (n int, done bool, err error) {
	switch f.state {
	case stStreamFixed, stStreamChunked:
		if n, done, err = streamBody(f.state, &f.left, &f.cs, b); !done {
			return n, false, err
		}
	case stStreamClose:
		return len(b), false, nil
	default:
		return 0, false, ErrBadMessage
	}
	f.done(0)
	return n, true, nil
}

// streamBody cuts the next part of a streamed body (Content-Length or
// chunked) from b, for requests and responses alike: n of its bytes
// belong to the body, done says the body ended with them.
func streamBody(state int, left *int64, cs *chunkStream, b []byte) (n int, done bool, err error) {
	if state == stStreamChunked {
		n, done, err = cs.feed(b)
		return n, done && err == nil, err
	}
	n = len(b)
	if int64(n) >= *left {
		n = int(*left)
	}
	*left -= int64(n)
	return n, *left == 0, nil
}

func (f *ResponseFramer) done(n int) (int, bool, error) {
	f.last = f.head
	f.state, f.base, f.scanned, f.head = stHeader, 0, 0, Head{}
	return n, true, nil
}

// Finish is called when the server closed the stream with buf collected:
// a response delimited by the close is complete (ok); anything else was
// cut short.
func (f *ResponseFramer) Finish(buf []byte) (n int, ok bool) {
	if f.state == stStreamClose {
		f.done(len(buf))
		return len(buf), true
	}
	if f.state != stUntilClose {
		return 0, false
	}
	f.done(len(buf))
	return len(buf), true
}

// Closing reports whether the server ends the connection after the latest
// complete response.
func (f *ResponseFramer) Closing() bool {
	return f.last.UntilClose || f.last.WantsClose()
}

// chunkStream follows a chunked body that passes by in parts, keeping
// only its position: the size line being read, the data left in the
// current chunk, the line end after it, or the trailers.
type chunkStream struct {
	state  int // csSize, csData, csDataEnd, csTrailer
	left   int64
	size   int64
	digits int
	ext    bool
	cr     bool
	line   int // bytes of the current line so far
	// eating: the line end after the current chunk's data is dropped,
	// not passed on (Splice, Eat).
	eating bool
}

const (
	csSize = iota
	csData
	csDataEnd
	csTrailer
)

// feed consumes b up to the end of the body: n bytes of it belong to
// the body, and done says the last chunk and trailers are in.
func (c *chunkStream) feed(b []byte) (n int, done bool, err error) {
	for n < len(b) {
		switch c.state {
		case csData:
			k := int64(len(b) - n)
			if k > c.left {
				k = c.left
			}
			n += int(k)
			c.left -= k
			if c.left == 0 {
				c.state = csDataEnd
			}
			continue
		case csDataEnd:
			ch := b[n]
			n++
			switch {
			case ch == '\r' && !c.cr:
				c.cr = true
			case ch == '\n':
				c.cr = false
				c.state = csSize
			default:
				return n, false, ErrBadMessage
			}
			continue
		}
		ch := b[n]
		n++
		if c.cr && ch != '\n' {
			return n, false, ErrBadMessage
		}
		switch ch {
		case '\r':
			c.cr = true
			continue
		case '\n':
			c.cr = false
			if c.state == csTrailer {
				if c.line == 0 {
					*c = chunkStream{}
					return n, true, nil
				}
				c.line = 0
				continue
			}
			if c.digits == 0 {
				return n, false, ErrBadMessage
			}
			if c.size == 0 {
				c.state = csTrailer
			} else {
				c.state, c.left = csData, c.size
			}
			c.size, c.digits, c.ext, c.line = 0, 0, false, 0
			continue
		}
		c.line++
		if c.line > maxChunkLine*4 || (c.state == csSize && c.line > maxChunkLine) {
			return n, false, ErrBadMessage
		}
		if c.state == csTrailer || c.ext {
			continue
		}
		if v, ok := unhex(ch); ok {
			if c.digits == 15 {
				return n, false, ErrBadMessage
			}
			c.size = c.size<<4 | int64(v)
			c.digits++
			continue
		}
		if ch != ';' && ch != ' ' && ch != '\t' {
			return n, false, ErrBadMessage
		}
		c.ext = true
	}
	return n, false, nil
}

// chunkSize is the size a chunk's size line l gives (hexadecimal, up to
// 15 digits, what follows the digits ignored), for bodies the framer has
// already checked.
func chunkSize(l []byte) (int, error) {
	size, digits := 0, 0
	for _, ch := range l {
		v, ok := unhex(ch)
		if !ok {
			break
		}
		if digits == 15 {
			return 0, ErrBadMessage
		}
		size = size<<4 | int(v)
		digits++
	}
	if digits == 0 {
		return 0, ErrBadMessage
	}
	return size, nil
}

// Dechunk appends the data of the chunked body b (the bytes after the
// head, trailers included, as a framer accepted them) to dst: what a rule
// reads as the payload of a chunked message.
func Dechunk(dst, b []byte) ([]byte, error) {
	for i := 0; i < len(b); {
		l, next, whole := fullLine(b, i)
		if !whole {
			return dst, ErrBadMessage
		}
		size, err := chunkSize(l)
		if err != nil {
			return dst, err
		}
		if size == 0 {
			return dst, nil // the trailers follow
		}
		if next+size > len(b) {
			return dst, ErrBadMessage
		}
		dst = append(dst, b[next:next+size]...)
		i = next + size
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
	}
	return dst, ErrBadMessage
}

// Unchunker gives the data of a chunked body that arrives in parts, the
// parts a framer has already cut and checked (ResponseFramer.Body): what
// a filter of the body's content reads. Trailers are kept aside
// (Trailers) for a body that is chunked again.
type Unchunker struct {
	cs       chunkStream
	done     bool
	trailers []byte
}

// Trailers is the trailer section of the body once it has ended (its
// field lines and the blank line ending it), nil when it had none: what
// a re-chunked body ends with (AppendLastChunk). It holds at most
// DefaultMaxHeader bytes; a longer section is dropped.
func (u *Unchunker) Trailers() []byte {
	if !u.done || len(u.trailers) > DefaultMaxHeader {
		return nil
	}
	return u.trailers
}

// Append appends the data in p, the next bytes of the chunked body, to
// dst. Bytes after the body's end are ignored.
func (u *Unchunker) Append(dst, p []byte) ([]byte, error) {
	for len(p) > 0 && !u.done {
		if u.cs.state == csData {
			k := min(int64(len(p)), u.cs.left)
			dst = append(dst, p[:k]...)
			if u.cs.left -= k; u.cs.left == 0 {
				u.cs.state = csDataEnd
			}
			p = p[k:]
			continue
		}
		if u.cs.state == csTrailer && len(u.trailers) <= DefaultMaxHeader &&
			(len(u.trailers) > 0 || p[0] != '\r' && p[0] != '\n') {
			// (A section with no field keeps nothing.)
			u.trailers = append(u.trailers, p[0])
		}
		_, done, err := u.cs.feed(p[:1])
		if err != nil {
			return dst, err
		}
		u.done = done
		p = p[1:]
	}
	return dst, nil
}
