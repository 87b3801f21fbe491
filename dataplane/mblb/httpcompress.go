package mblb

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
)

// An http-compression profile on an HTTP virtual compresses responses
// for the clients whose Accept-Encoding allows it (the decisions are
// dataplane/httpcompress's). When a request is read, the client's
// codings and the request's rules (COMPRESS::) are noted with it, and
// its Accept-Encoding is taken out so that the member answers
// uncompressed (unless keep-accept-encoding). When the answer's head
// comes, its status, Content-Type, Content-Encoding, Cache-Control and
// length decide, with the response's rules, whether its body is
// compressed. A body that is all in goes compressed with its new
// Content-Length; a streamed one is compressed part by part, each part
// flushed, and re-chunked (or ended by the close for an HTTP/1.0
// client), as the stream filter's bodies are (httpfilter.go), after the
// stream filter when the virtual has both.

// CompressChoice is what a rule's COMPRESS:: commands asked of one
// message.
type CompressChoice struct {
	// Set is 1 for COMPRESS::enable (compress whatever the profile's
	// lists and min-size say), -1 for COMPRESS::disable, 0 to leave it
	// to the profile.
	Set int8
	// Prefer is COMPRESS::method prefer's coding (None: the profile's).
	Prefer httpcompress.Coding
	// Level is COMPRESS::gzip level (0: the profile's).
	Level int
}

// HTTPCompressHandler is implemented by an HTTPRuleHandler on a virtual
// with an http-compression profile.
type HTTPCompressHandler interface {
	// CompressChoice is what the rules asked of the message whose
	// HTTP_REQUEST or HTTP_RESPONSE events ran last; reading it clears
	// it, so that it does not carry over to the next message.
	CompressChoice() CompressChoice
}

// compressReq is what the compression of a request's answer depends on,
// settled when the request was read.
type compressReq struct {
	// accept is what the client's Accept-Encoding allows (zero: no
	// compression, whatever the rules say).
	accept httpcompress.Accept
	// set is the request's rules' choice (CompressChoice.Set); -1 too
	// when the profile's URI lists exclude the request.
	set    int8
	prefer httpcompress.Coding
	level  uint8
	// browser is what the client's User-Agent allows under the profile's
	// browser-workarounds and selective (AnyType without them).
	browser httpcompress.Browser
}

// compressRequest notes, for the request whose head is head (h; the
// rules' edited head when they edited it) and whose HTTP_REQUEST rules
// ran, what its answer's compression depends on, and whether its
// Accept-Encoding goes (drop).
func (s *ClientConn) compressRequest(head []byte, h *httpx.Head) (z compressReq, drop bool) {
	p := s.e.cfg.Request.HTTP.Compress
	if p == nil {
		return z, false
	}
	var c CompressChoice
	if hc, ok := s.hrule.(HTTPCompressHandler); ok {
		c = hc.CompressChoice() // (taken even when unused: it is this request's)
	}
	if h.IsConnect() || h.Upgrade || h.IsHead() || h.Minor == 0 && !p.AllowHTTP10 {
		return z, false
	}
	hh := httpx.Head{HeaderEnd: len(head)}
	z.accept = httpcompress.Accepts(httpx.HeaderValue(head, &hh, "accept-encoding"))
	if !z.accept.Any() {
		return compressReq{}, false
	}
	z.set, z.prefer, z.level = c.Set, c.Prefer, uint8(c.Level)
	if z.set == 0 && !p.URIAllowed(requestURI(head)) {
		z.set = -1
	}
	if p.Browsers() {
		z.browser = p.BrowserAllows(httpx.HeaderValue(head, &hh, "user-agent"))
	}
	// A browser that gets nothing compressed (unless a rule enables it)
	// keeps its Accept-Encoding: the member answers it as it would
	// without the proxy.
	return z, z.set >= 0 && !p.KeepAcceptEncoding && (z.browser != httpcompress.NoCompression || z.set > 0)
}

// requestURI is the request target of the request line at the start of
// head.
func requestURI(head []byte) []byte {
	l := head
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	i := bytes.IndexByte(l, ' ')
	if i < 0 {
		return nil
	}
	l = l[i+1:]
	if j := bytes.IndexByte(l, ' '); j >= 0 {
		l = l[:j]
	}
	return l
}

// responseEncoder is the encoder for the body of the response whose head
// is head (h; the rules' edited head when they edited it) to req, whose
// body is length bytes long (-1: unknown); nil when it goes as it is.
// The response's rules (COMPRESS:: in HTTP_RESPONSE) are taken here.
func (sc *serverConn) responseEncoder(req *msg, head []byte, h *httpx.Head, length int64) *httpcompress.Encoder {
	p := sc.e.cfg.Request.HTTP.Compress
	if p == nil {
		return nil
	}
	z := req.hx.z
	if s := req.sess; s != nil && s.hresp {
		if hc, ok := s.hrule.(HTTPCompressHandler); ok {
			if c := hc.CompressChoice(); c.Set != 0 || c.Prefer != httpcompress.None || c.Level != 0 {
				if c.Set != 0 {
					z.set = c.Set
				}
				if c.Prefer != httpcompress.None {
					z.prefer = c.Prefer
				}
				if c.Level != 0 {
					z.level = uint8(c.Level)
				}
			}
		}
	}
	if !z.accept.Any() || req.hx.connect || req.hx.tunnel != 0 || h.Status < 200 {
		return nil
	}
	done := sc.e.cfg.Compressed
	if z.set < 0 || p.CPUSaver && p.Saving() {
		if done != nil {
			done(httpcompress.None, 0, 0)
		}
		return nil
	}
	hh := httpx.Head{HeaderEnd: len(head)}
	f := httpcompress.ResponseFacts{
		Status:          h.Status,
		ContentLength:   length,
		ContentType:     httpx.HeaderValue(head, &hh, "content-type"),
		ContentEncoding: httpx.HeaderValue(head, &hh, "content-encoding"),
		CacheControl:    httpx.HeaderValue(head, &hh, "cache-control"),
		ContentRange:    httpx.HeaderValue(head, &hh, "content-range"),
	}
	if !httpcompress.Compressible(&f) || z.set == 0 && (!p.ResponseAllowed(&f) || !browserAllowed(z.browser, f.ContentType)) {
		if done != nil {
			done(httpcompress.None, 0, 0)
		}
		return nil
	}
	prefer := z.prefer
	if prefer == httpcompress.None {
		prefer = p.Prefer
	}
	level := int(z.level)
	if level == 0 {
		level = p.Level
	}
	enc := httpcompress.NewEncoder(z.accept.Choose(prefer), level)
	enc.Done = done
	return enc
}

// browserAllowed reports whether a response of this Content-Type may be
// compressed for a client whose User-Agent the profile's browser rules
// judged b.
func browserAllowed(b httpcompress.Browser, contentType []byte) bool {
	switch b {
	case httpcompress.NoCompression:
		return false
	case httpcompress.HTMLOnly:
		return httpcompress.IsHTML(contentType)
	}
	return true
}

// encoding is how the head of a response whose body z compresses says
// so.
func (sc *serverConn) encoding(z *httpcompress.Encoder) httpx.Encoding {
	return httpx.Encoding{Coding: z.Coding().String(), Vary: sc.e.cfg.Request.HTTP.Compress.Vary}
}

// zipUnbuffered frames a whole response body that z compressed to more
// than buffer-size (body, in sc's scratch) as a body of unknown length
// under response-chunking: chunked to an HTTP/1.1 client, with the
// member's trailers when it chunked (member: body is the member's, not
// a rule's), or ended by the close (closeAfter) otherwise.
func (sc *serverConn) zipUnbuffered(z *httpcompress.Encoder, req *msg, b []byte, h *httpx.Head, head, body []byte, member bool) (_, _ []byte, closeAfter bool) {
	c := sc.e.cfg.Request.HTTP.ResponseChunking
	enc := sc.encoding(z)
	if c.Out(h.Chunked, true, false, clientChunks(req), false) != httpx.Chunked {
		sc.filterHead = httpx.SetEncoded(sc.filterHead[:0], head, enc, -1, false)
		return sc.dropTrailerField(sc.filterHead, h, false), body, true
	}
	var trailers []byte
	if member && h.Chunked {
		trailers = httpx.ChunkTrailers(b[h.HeaderEnd:])
	}
	sc.chunkBody = httpx.AppendLastChunk(httpx.AppendChunks(sc.chunkBody[:0], body, 0), trailers)
	sc.filterHead = httpx.SetEncoded(sc.filterHead[:0], head, enc, -1, true)
	return sc.filterHead, sc.chunkBody, false
}
