package httpx

// Uploads: a request whose body passes the framer's Max is streamed to
// its member instead of being refused, as BIG-IP's http profile does (it
// has no body limit): the head is framed and handed over at once
// (Streaming), then the body is cut as it arrives (Body), Content-Length
// counted down or chunks followed to the last one and its trailers.

// tooLarge is the answer to a body over Max: an error, or with Stream the
// switch to streaming it. The head stays at the start of the buffer Frame
// saw (the caller forwards buf[:Streaming().HeaderEnd] and hands the
// bytes after it to Body).
func (f *RequestFramer) tooLarge() (int, bool, error) {
	if !f.Stream {
		return 0, false, ErrBodyTooLarge
	}
	if f.state == stFixed {
		f.state, f.left = stStreamFixed, f.head.ContentLength
	} else {
		f.state, f.cs = stStreamChunked, chunkStream{}
	}
	return 0, false, ErrStreamBody
}

// StreamNow switches a request whose head is in and whose body is not
// all there (Frame answered incomplete) to streaming, as a body over Max
// does: the caller knows no more of it is waiting (its socket is
// drained), and holding the start of the body until the rest comes
// would stall a client that sends it slowly. buf is what Frame saw, the
// head at its start: the head is parsed again there, since the buffer
// may have moved since Frame first saw it. It reports whether it
// switched (false without Stream, or without a head waiting).
func (f *RequestFramer) StreamNow(buf []byte) bool {
	if !f.Stream || (f.state != stFixed && f.state != stChunked) {
		return false
	}
	if h, err := ParseRequest(buf); err == nil {
		f.head = h
	}
	f.tooLarge()
	return true
}

// Streaming is the head of the request being streamed (nil when none
// is), as ParseRequest read it when the framer switched: its views point
// into the buffer of that call.
func (f *RequestFramer) Streaming() *Head {
	if f.state == stStreamFixed || f.state == stStreamChunked {
		return &f.head
	}
	return nil
}

// BodyLeft is how many body bytes of a streamed Content-Length request
// are still to come; -1 for a chunked one (or none streaming).
func (f *RequestFramer) BodyLeft() int64 {
	if f.state == stStreamFixed {
		return f.left
	}
	return -1
}

// BodyLeft is how many body bytes of a response streamed by its
// Content-Length are still to come; -1 otherwise.
func (f *ResponseFramer) BodyLeft() int64 {
	if f.state == stStreamFixed {
		return f.left
	}
	return -1
}

// StreamNow is RequestFramer.StreamNow for a response: one whose head
// is in and whose body (by its Content-Length, chunked, or up to the
// close) is not all there streams from now on.
func (f *ResponseFramer) StreamNow() bool {
	if !f.Stream || f.Waiting() == nil {
		return false
	}
	f.tooLarge()
	return true
}

// Waiting is the head of a response whose head has arrived and whose
// body has not all (nil otherwise).
func (f *ResponseFramer) Waiting() *Head {
	switch f.state {
	case stFixed, stChunked, stUntilClose:
		return &f.head
	}
	return nil
}

// Body cuts the next part of a streamed body from b, the bytes that
// followed the previous part (the first time, those after the head): n
// of them belong to the body, and done says the request ended with them
// (the framer then frames the next request).
func (f *RequestFramer) Body(b []byte) (n int, done bool, err error) {
	switch f.state {
	case stStreamFixed, stStreamChunked:
		if n, done, err = streamBody(f.state, &f.left, &f.cs, b); !done {
			return n, false, err
		}
	default:
		return 0, false, ErrBadMessage
	}
	f.last = f.head
	f.state, f.scanned, f.lineOK, f.head, f.left = stHeader, 0, false, Head{}, 0
	return n, true, nil
}

// DechunkPrefix is Dechunk for the start of a chunked body that has not
// all arrived: the data of the chunks present, the last one possibly
// cut short, up to max bytes (0: no bound). What a rule's HTTP::collect
// reads of a streamed upload.
func DechunkPrefix(dst, b []byte, max int) ([]byte, error) {
	start := len(dst)
	for i := 0; i < len(b); {
		if max > 0 && len(dst)-start >= max {
			break
		}
		l, next, whole := fullLine(b, i)
		if !whole {
			break
		}
		size, err := chunkSize(l)
		if err != nil {
			return dst, err
		}
		if size == 0 {
			break
		}
		end := min(next+size, len(b))
		dst = append(dst, b[next:end]...)
		i = end
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
	}
	if max > 0 && len(dst)-start > max {
		dst = dst[:start+max]
	}
	return dst, nil
}
