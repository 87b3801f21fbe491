package mblb

import (
	"bytes"
	"net/netip"

	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/ssefilter"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// A stream profile on an HTTP virtual rewrites response and request
// bodies as they pass (BIG-IP's stream filter; the expression and its matching are
// dataplane/streamfilter's). Only the body is filtered, never the head.
// A body that is all in when HTTP_RESPONSE has run is filtered whole and
// sent with its new Content-Length; a streamed body is filtered part by
// part and, its length being unknown until its end, re-chunked for an
// HTTP/1.1 client or ended by closing the connection for an HTTP/1.0
// one, as BIG-IP's rechunking does. Request bodies likewise: a whole one
// goes with its new Content-Length, a streamed upload chunked (an
// HTTP/1.0 upload, which cannot be chunked, passes unchanged).

// StreamOptions are the stream profile's settings as the engine applies
// them.
type StreamOptions struct {
	// Profile names the stream profile (for logs).
	Profile string
	// Expr is the profile's expression (its source and target), nil
	// when it gives none: then only a rule's STREAM::expression and
	// STREAM::enable filter.
	Expr *streamfilter.Expr
	// ChunkSize is chunk-size: a body the proxy changes that goes
	// chunked goes in chunks of at most this many bytes (0: each part
	// as one chunk), so that a receiver with small buffers is not handed
	// a filtered megabyte as one chunk.
	ChunkSize int
}

// HTTPStreamHandler is implemented by an HTTPRuleHandler on a virtual
// with a stream profile: the rules decide, with STREAM::enable,
// STREAM::disable and STREAM::expression, whether and how a response's
// body is filtered, and may run STREAM_MATCHED for each match.
type HTTPStreamHandler interface {
	// BodyFilter is the filter for the body of the message whose
	// HTTP_REQUEST or HTTP_RESPONSE events ran last (nil: the body
	// passes unchanged).
	BodyFilter() *streamfilter.Filter
}

// streamFilter is the filter for the next body of s's client: the rules'
// when the client has an HTTPStreamHandler, else the profile's; nil
// without a stream profile.
func (s *ClientConn) streamFilter() *streamfilter.Filter {
	so := s.e.cfg.Request.HTTP.Stream
	if so == nil {
		return nil
	}
	if sh, ok := s.hrule.(HTTPStreamHandler); ok {
		return sh.BodyFilter()
	}
	if so.Expr == nil {
		return nil
	}
	return streamfilter.New(so.Expr, 0, nil)
}

// responseFilter is the filter for the body of the response h to req,
// nil when the virtual has no stream profile, the rules or the profile
// leave the body as it is, or the response has no body to filter.
func (sc *serverConn) responseFilter(req *msg, h *httpx.Head) *streamfilter.Filter {
	if sc.e.cfg.Request.HTTP.Stream == nil || req.httpHead || h.Status < 200 || h.Status == 204 || h.Status == 304 || req.hx.connect || req.hx.tunnel != 0 {
		return nil
	}
	return req.sess.streamFilter()
}

// filterWhole filters a whole body, chunked as its sender framed it or
// not, into *out (reused), with *plain as the scratch for a chunked
// body's data; for responses and requests alike.
func filterWhole(f *streamfilter.Filter, out, plain *[]byte, body []byte, chunked bool) []byte {
	if chunked {
		// (The framer checked the chunks: no error can come.)
		*plain, _ = httpx.Dechunk((*plain)[:0], body)
		body = *plain
	}
	*out = f.Close(f.Write((*out)[:0], body))
	return *out
}

// transformWhole gives a whole response body, chunked as its sender
// framed it or not, filtered by f and compressed by z (either may be
// nil), in sc's scratch.
func (sc *serverConn) transformWhole(f *streamfilter.Filter, z *httpcompress.Encoder, body []byte, chunked bool) []byte {
	if sc.sse != nil {
		body, chunked = sc.sseWhole(body, chunked), false // httpsse.go
	}
	if sc.html != nil {
		body, chunked = sc.htmlWhole(body, chunked), false // httphtml.go
	}
	if f != nil {
		body = filterWhole(f, &sc.filtered, &sc.plain, body, chunked)
	} else if chunked {
		sc.plain, _ = httpx.Dechunk(sc.plain[:0], body)
		body = sc.plain
	}
	if z != nil {
		sc.zipped = z.Whole(sc.zipped[:0], body)
		body = sc.zipped
	}
	return body
}

// bodyFilter transforms one body that passes in parts: it reads the
// body's data (de-chunked when the sender chunked it), passes it through
// the stream filter and the compressor (either may be absent), and
// frames the result for the receiver, chunked or as it comes (a body the
// close ends).
type bodyFilter struct {
	sse                 *ssefilter.Pass  // the sse profile's, first (httpsse.go)
	html                *htmlfilter.Pass // the html profile's, before f (httphtml.go)
	f                   *streamfilter.Filter
	z                   *httpcompress.Encoder
	chunkedIn, chunkOut bool
	chunkSize           int // the stream profile's chunk-size (0: a chunk per part)
	unchunk             httpx.Unchunker
	// plain, out and zout are scratch: a chunked part's data, the
	// filter's output, the compressor's.
	plain, out, zout []byte
	hout             []byte // the html pass's output
	sout             []byte // the sse pass's output
}

func newBodyFilter(f *streamfilter.Filter, z *httpcompress.Encoder, chunkedIn, chunkOut bool) *bodyFilter {
	return &bodyFilter{f: f, z: z, chunkedIn: chunkedIn, chunkOut: chunkOut}
}

// part transforms p, the next bytes of the body as its sender framed
// them (checked by a framer), and appends to dst what goes on; end: they
// are the body's last. Each part's compressed output is flushed, so that
// what the member sent is not held back.
func (bf *bodyFilter) part(dst, p []byte, end bool) []byte {
	data := p
	if bf.chunkedIn {
		// (The framer checked the chunks: no error can come.)
		bf.plain, _ = bf.unchunk.Append(bf.plain[:0], p)
		data = bf.plain
	}
	if bf.sse != nil {
		data = bf.sse.Write(bf.sout[:0], data)
		if end {
			data = bf.sse.Close(data)
		}
		bf.sout = data
	}
	if bf.html != nil {
		data = bf.html.Write(bf.hout[:0], data)
		if end {
			data = bf.html.Close(data)
		}
		bf.hout = data
	}
	out := data
	if bf.f != nil {
		out = bf.f.Write(bf.out[:0], data)
		if end {
			out = bf.f.Close(out)
		}
		bf.out = out
	}
	if bf.z != nil {
		zout := bf.z.Write(bf.zout[:0], out, !end)
		if end {
			zout = bf.z.Close(zout)
			bf.z = nil
		}
		bf.zout, out = zout, zout
	}
	if !bf.chunkOut {
		return append(dst, out...)
	}
	dst = httpx.AppendChunks(dst, out, bf.chunkSize)
	if end {
		dst = httpx.AppendLastChunk(dst, bf.unchunk.Trailers())
	}
	return dst
}

// startFilter sets up the transformation of a streamed response body by
// the stream filter f and the compressor z (either may be nil): head,
// framed by its Content-Length or as chunked, loses that framing for
// chunked (an HTTP/1.1 client) or for the close that will end it, and
// says how the body is encoded when z compresses it. The result is the
// head to send.
func (sc *serverConn) startFilter(f *streamfilter.Filter, z *httpcompress.Encoder, req *msg, head []byte, h *httpx.Head) []byte {
	chunkOut := sc.streamChunkOut(req, h) // httpchunking.go
	sc.strm.filter = newBodyFilter(f, z, h.Chunked, chunkOut)
	sc.strm.filter.html, sc.html = sc.html, nil
	sc.strm.filter.sse, sc.sse = sc.sse, nil
	if so := sc.e.cfg.Request.HTTP.Stream; so != nil {
		sc.strm.filter.chunkSize = so.ChunkSize
	}
	if z != nil {
		sc.filterHead = httpx.SetEncoded(sc.filterHead[:0], head, sc.encoding(z), -1, chunkOut)
	} else {
		sc.filterHead = httpx.SetChunked(sc.filterHead[:0], head, chunkOut)
	}
	return sc.dropTrailerField(sc.filterHead, h, chunkOut) // httpchunking.go
}

// requestFilter is the filter for the body of the request h, nil when
// the virtual has no stream profile, the rules or the profile leave the
// body as it is, or the request has no body (or opens a tunnel).
func (s *ClientConn) requestFilter(h *httpx.Head) *streamfilter.Filter {
	if s.e.cfg.Request.HTTP.Stream == nil || h.IsConnect() || h.Upgrade || !h.Chunked && h.ContentLength <= 0 {
		return nil
	}
	return s.streamFilter()
}

// filterRequest filters the whole body of the request h framed in b,
// after its rules: it becomes x's body (a new x when the client has no
// rules), which the request then goes with (re-framed).
func (s *ClientConn) filterRequest(f *streamfilter.Filter, b []byte, h *httpx.Head, x *HTTPEvent) *HTTPEvent {
	if x == nil {
		x = &s.hx
		x.reset(b, h, false, netip.AddrPort{})
	}
	if x.bodySet {
		x.SetBody(filterWhole(f, &s.reqFiltered, &s.reqPlain, x.body, false))
	} else {
		x.SetBody(filterWhole(f, &s.reqFiltered, &s.reqPlain, b[h.HeaderEnd:], h.Chunked))
	}
	return x
}

// requestMinor is the HTTP/1.x minor version of the request at the start
// of b (1 when it cannot be read).
func requestMinor(b []byte) int {
	l := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		l = b[:i]
	}
	l = bytes.TrimRight(l, "\r")
	if bytes.HasSuffix(l, []byte("HTTP/1.0")) {
		return 0
	}
	return 1
}
