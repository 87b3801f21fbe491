package mblb

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/httpx"
)

// The http profile's request-chunking and response-chunking on the
// engine (httpx.Chunking says what each mode does). A body the proxy
// leaves alone costs nothing under the default mode: the only test on
// that path is the mode's zero value. Otherwise:
//
//   - a whole body (all in when its head leaves) is re-framed here:
//     de-chunked with a Content-Length (unchunk), or sent as one chunk
//     with the sender's trailers (rechunk, and a changed body that came
//     chunked);
//   - a streamed body goes through a bodyFilter without a filter or
//     compressor, which de-chunks it (a response is then ended by the
//     close) or chunks it part by part (httpfilter.go);
//   - a body the proxy changes is framed by the same decision
//     (startFilter, requestBody).
//
// Bodies of HEAD answers, 1xx, 204 and 304, tunnels and messages
// without a body are never touched.

// clientChunks reports whether the client of req takes chunked
// responses (it spoke HTTP/1.1).
func clientChunks(req *msg) bool { return requestMinor(req.b) >= 1 }

// hasBody reports whether the response h to req carries a body that the
// chunking modes apply to.
func hasBody(req *msg, h *httpx.Head) bool {
	return !req.httpHead && h.Status >= 200 && h.Status != 204 && h.Status != 304 &&
		!req.hx.connect && req.hx.tunnel == 0 &&
		(h.Chunked || h.ContentLength > 0 || h.UntilClose)
}

// chunkWhole frames a whole response body per response-chunking: b and
// h the response as the member sent it, head and body what goes to the
// client so far (head nil: the member's), modified whether the proxy
// changed the body (body is then its data, framed by a Content-Length
// in head). It returns the head and body to send (head nil: unchanged).
func (sc *serverConn) chunkWhole(req *msg, b []byte, h *httpx.Head, head, body []byte, modified bool) ([]byte, []byte) {
	if !hasBody(req, h) {
		return head, body
	}
	c := sc.e.cfg.Request.HTTP.ResponseChunking
	out := c.Out(h.Chunked, modified, true, clientChunks(req), false)
	base := head
	if base == nil {
		base = b[h.Start:h.HeaderEnd]
	}
	switch {
	case out == httpx.ByLength && h.Chunked:
		if !modified {
			// (The framer checked the chunks: no error can come.)
			sc.chunkBody, _ = httpx.Dechunk(sc.chunkBody[:0], body)
			body = sc.chunkBody
		}
		// (The trailers are dropped, and so is the Trailer field.)
		sc.chunkHead = httpx.Unchunked(sc.chunkHead[:0], base, len(body))
		return sc.chunkHead, body
	case out == httpx.Chunked:
		var trailers []byte
		if h.Chunked {
			trailers = httpx.ChunkTrailers(b[h.HeaderEnd:])
		}
		size := 0
		if so := sc.e.cfg.Request.HTTP.Stream; so != nil && modified {
			size = so.ChunkSize // chunk-size (httpfilter.go)
		}
		sc.chunkBody = httpx.AppendLastChunk(httpx.AppendChunks(sc.chunkBody[:0], body, size), trailers)
		sc.chunkHead = httpx.SetChunked(sc.chunkHead[:0], base, true)
		return sc.chunkHead, sc.chunkBody
	}
	return head, body
}

// restream reports whether a streamed response the proxy does not
// change is re-framed part by part all the same (unchunk of a chunked
// body, rechunk of one that is not); startFilter then sets it up.
func (sc *serverConn) restream(req *msg, h *httpx.Head) bool {
	c := sc.e.cfg.Request.HTTP.ResponseChunking
	return hasBody(req, h) && c.Out(h.Chunked, false, false, clientChunks(req), false) != httpx.AsIs
}

// streamChunkOut is whether a streamed response body that passes
// through a bodyFilter leaves chunked (else the close ends it).
func (sc *serverConn) streamChunkOut(req *msg, h *httpx.Head) bool {
	c := sc.e.cfg.Request.HTTP.ResponseChunking
	if c == httpx.Sustain {
		return clientChunks(req) && !h.UntilClose
	}
	return c.Out(h.Chunked, true, false, clientChunks(req), false) == httpx.Chunked
}

// rechunkRequest is x (a new one when the client has no rules) with the
// whole body of the request h framed in b as request-chunking wants it
// when the proxy does not change it: de-chunked (unchunk) or chunked
// (rechunk); requestBody frames it.
func (s *ClientConn) rechunkRequest(b []byte, h *httpx.Head, x *HTTPEvent) *HTTPEvent {
	c := s.e.cfg.Request.HTTP.RequestChunking
	if h.IsConnect() || h.Upgrade || !h.Chunked && h.ContentLength <= 0 {
		return x
	}
	out := c.Out(h.Chunked, false, true, h.Minor >= 1, true)
	if out == httpx.AsIs {
		return x
	}
	if x == nil {
		x = &s.hx
		x.reset(b, h, false, netip.AddrPort{})
	}
	body := b[h.HeaderEnd:]
	if h.Chunked {
		// (The framer checked the chunks: no error can come.)
		s.reqPlain, _ = httpx.Dechunk(s.reqPlain[:0], body)
		body = s.reqPlain
	}
	x.SetBody(body)
	return x
}

// requestBody frames data, the whole body a request (b, h as the client
// sent it; head its head as it goes) now carries, per request-chunking:
// with its Content-Length, or as one chunk with the client's trailers.
func (s *ClientConn) requestBody(head, data, b []byte, h *httpx.Head) ([]byte, []byte) {
	c := s.e.cfg.Request.HTTP.RequestChunking
	if c.Out(h.Chunked, true, true, h.Minor >= 1, true) == httpx.Chunked {
		var trailers []byte
		if h.Chunked && len(b) > h.HeaderEnd {
			trailers = httpx.ChunkTrailers(b[h.HeaderEnd:])
		}
		s.reframe = httpx.SetChunked(s.reframe[:0], head, true)
		s.reqChunked = httpx.AppendChunked(s.reqChunked[:0], data, trailers)
		return s.reframe, s.reqChunked
	}
	if h.Chunked {
		s.reframe = httpx.Unchunked(s.reframe[:0], head, len(data))
	} else {
		s.reframe = httpx.SetContentLength(s.reframe[:0], head, len(data))
	}
	return s.reframe, data
}

// dropTrailerField is head without its Trailer field when the streamed
// response h, which came chunked, leaves without chunks (and so without
// its trailers).
func (sc *serverConn) dropTrailerField(head []byte, h *httpx.Head, chunkOut bool) []byte {
	if chunkOut || !h.Chunked {
		return head
	}
	sc.chunkHead = httpx.DropField(sc.chunkHead[:0], head, "trailer")
	return sc.chunkHead
}

// rechunkUpload reports whether a streamed request body the proxy does
// not change goes chunked part by part all the same (rechunk of a body
// sent with a Content-Length by an HTTP/1.1 client).
func (s *ClientConn) rechunkUpload(h *httpx.Head) bool {
	c := s.e.cfg.Request.HTTP.RequestChunking
	return c == httpx.Rechunk && !h.Chunked && h.ContentLength > 0 && h.Minor >= 1 && !h.IsConnect() && !h.Upgrade
}
