package httpx

import "strconv"

// Chunking is the http profile's request-chunking or response-chunking:
// how a message's body is framed on its way out of the proxy. BIG-IP
// 15.0 folded the older preserve and selective into sustain; the three
// names all mean Sustain here, the zero value, so that a profile left at
// its defaults changes nothing on the wire that the proxy does not have
// to change.
type Chunking uint8

const (
	// Sustain keeps the sender's framing: a body the proxy leaves alone
	// goes as it came; one it changes (compression, a stream filter, a
	// rule's new payload) stays chunked when it came chunked, and
	// otherwise goes with its new Content-Length, or chunked (HTTP/1.1)
	// or ended by the close (HTTP/1.0 responses) when its length is not
	// known before it leaves.
	Sustain Chunking = iota
	// Unchunk sends no chunked body: the chunks' data goes with a
	// Content-Length when the whole body is in, else (a streamed
	// response) ended by the close. Trailers are dropped. A streamed
	// request body stays chunked: a request cannot be ended by the
	// close, and holding a whole upload has no bound.
	Unchunk
	// Rechunk sends every body chunked (Content-Length removed) to an
	// HTTP/1.1 peer; an HTTP/1.0 one cannot take chunks and is treated
	// as Unchunk. A chunked body is passed with its chunks and trailers
	// as they came unless the proxy changes it.
	Rechunk
)

// ParseChunking reads a request-chunking or response-chunking value:
// preserve, selective and sustain (BIG-IP 15's name for both) are
// Sustain.
func ParseChunking(s string) (Chunking, bool) {
	switch s {
	case "preserve", "selective", "sustain":
		return Sustain, true
	case "unchunk":
		return Unchunk, true
	case "rechunk":
		return Rechunk, true
	}
	return Sustain, false
}

// String is the mode's name as the profile spells it.
func (c Chunking) String() string {
	switch c {
	case Unchunk:
		return "unchunk"
	case Rechunk:
		return "rechunk"
	}
	return "sustain"
}

// Framing is how a body leaves the proxy (Chunking.Out).
type Framing uint8

const (
	// AsIs: the bytes and their framing fields as the sender sent them.
	AsIs Framing = iota
	// ByLength: the body's data with a Content-Length.
	ByLength
	// Chunked: Transfer-Encoding: chunked.
	Chunked
	// ByClose: the data, then the connection's close (responses only).
	ByClose
)

// Out decides how a body leaves under c. chunkedIn: its sender chunked
// it; modified: the proxy changes its bytes; known: its whole length is
// known when the head leaves (the body is all in); chunkOK: the receiver
// speaks HTTP/1.1; request: it is a request's body, which the close
// cannot end. Only messages that carry a body are asked.
func (c Chunking) Out(chunkedIn, modified, known, chunkOK, request bool) Framing {
	if c == Rechunk && !chunkOK {
		c = Unchunk // (chunks are not HTTP/1.0)
	}
	var want Framing
	switch {
	case c == Sustain && !modified:
		return AsIs
	case c == Unchunk && !chunkedIn && !modified:
		return AsIs
	case c == Rechunk && chunkedIn && !modified:
		return AsIs
	case c == Rechunk, c == Sustain && chunkedIn:
		want = Chunked
	case known:
		return ByLength
	case c == Sustain:
		want = Chunked
	default: // Unchunk, length unknown
		want = ByClose
	}
	switch {
	case want == ByClose && request:
		return Chunked
	case want == Chunked && !chunkOK:
		if known {
			return ByLength
		}
		if request {
			return AsIs // (an HTTP/1.0 upload: passed as it came)
		}
		return ByClose
	}
	return want
}

// AppendChunk appends data to dst as one chunk (nothing when data is
// empty: a zero-size chunk would end the body).
func AppendChunk(dst, data []byte) []byte {
	if len(data) == 0 {
		return dst
	}
	dst = strconv.AppendInt(dst, int64(len(data)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, data...)
	return append(dst, "\r\n"...)
}

// AppendChunks appends data as chunks of at most size bytes each (size
// 0 or less: one chunk), the stream profile's chunk-size.
func AppendChunks(dst, data []byte, size int) []byte {
	if size <= 0 {
		return AppendChunk(dst, data)
	}
	for len(data) > size {
		dst = AppendChunk(dst, data[:size])
		data = data[size:]
	}
	return AppendChunk(dst, data)
}

// AppendLastChunk appends the end of a chunked body: the zero-size chunk
// and the trailer section trailers (its field lines and the blank line
// ending it, as ChunkTrailers gives them; empty: none).
func AppendLastChunk(dst, trailers []byte) []byte {
	dst = append(dst, "0\r\n"...)
	if len(trailers) == 0 {
		return append(dst, "\r\n"...)
	}
	return append(dst, trailers...)
}

// AppendChunked appends data framed as a whole chunked body: one chunk,
// the last chunk and trailers.
func AppendChunked(dst, data, trailers []byte) []byte {
	return AppendLastChunk(AppendChunk(dst, data), trailers)
}

// ChunkedSize is how many bytes AppendChunked adds for n bytes of data
// and t of trailers, to size a destination once.
func ChunkedSize(n, t int) int { return n + t + 16 + 2 + 2 + 5 }

// ChunkTrailers is the trailer section of the chunked body b (the bytes
// after the head, as a framer accepted them): what follows the last
// chunk's size line, blank line included; nil when b carries no
// trailer field, so that a body re-framed without them ends plainly.
func ChunkTrailers(b []byte) []byte {
	for i := 0; i < len(b); {
		l, next, whole := fullLine(b, i)
		if !whole {
			return nil
		}
		size, err := chunkSize(l)
		if err != nil {
			return nil
		}
		if size == 0 {
			if t := b[next:]; len(t) > 2 || len(t) == 2 && t[0] != '\r' {
				return t
			}
			return nil
		}
		i = next + size
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
	}
	return nil
}

// Unchunked appends to dst the header block head (complete, blank line
// included) of a chunked message whose data goes as n bytes with a
// Content-Length: Content-Length, Transfer-Encoding and Trailer (which
// announced trailers that are no longer sent) give way to
// Content-Length: n.
func Unchunked(dst, head []byte, n int) []byte {
	dst, bl := rewriteFields(dst, head, func(dst, _, name, _ []byte) ([]byte, bool) {
		return dst, EqualFold(name, "content-length") || EqualFold(name, "transfer-encoding") || EqualFold(name, "trailer")
	})
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, "\r\n"...)
	return append(dst, head[bl:]...)
}

// DropField appends to dst the header block head (complete, blank line
// included) without its fields called name (in lower case): a Trailer
// field once a body's trailers are dropped.
func DropField(dst, head []byte, name string) []byte {
	dst, bl := rewriteFields(dst, head, func(dst, _, n, _ []byte) ([]byte, bool) {
		return dst, EqualFold(n, name)
	})
	return append(dst, head[bl:]...)
}
