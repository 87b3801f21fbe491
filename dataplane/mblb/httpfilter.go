package mblb

import (
	"bytes"
	"strconv"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// A stream profile on an HTTP virtual rewrites response bodies as they
// pass (BIG-IP's stream filter; the expression and its matching are
// dataplane/streamfilter's). Only the body is filtered, never the head.
// A body that is all in when HTTP_RESPONSE has run is filtered whole and
// sent with its new Content-Length; a streamed body is filtered part by
// part and, its length being unknown until its end, re-chunked for an
// HTTP/1.1 client or ended by closing the connection for an HTTP/1.0
// one, as BIG-IP's rechunking does. Request bodies pass unchanged.

// StreamOptions are the stream profile's settings as the engine applies
// them.
type StreamOptions struct {
	// Profile names the stream profile (for logs).
	Profile string
	// Expr is the profile's expression (its source and target), nil
	// when it gives none: then only a rule's STREAM::expression and
	// STREAM::enable filter.
	Expr *streamfilter.Expr
}

// HTTPStreamHandler is implemented by an HTTPRuleHandler on a virtual
// with a stream profile: the rules decide, with STREAM::enable,
// STREAM::disable and STREAM::expression, whether and how a response's
// body is filtered, and may run STREAM_MATCHED for each match.
type HTTPStreamHandler interface {
	// ResponseFilter is the filter for the body of the response whose
	// HTTP_RESPONSE events ran last (nil: the body passes unchanged).
	ResponseFilter() *streamfilter.Filter
}

// responseFilter is the filter for the body of the response h to req,
// nil when the virtual has no stream profile, the rules or the profile
// leave the body as it is, or the response has no body to filter.
func (sc *serverConn) responseFilter(req *msg, h *httpx.Head) *streamfilter.Filter {
	so := sc.e.cfg.Request.HTTP.Stream
	if so == nil || req.httpHead || h.Status < 200 || h.Status == 204 || h.Status == 304 || req.hx.connect || req.hx.tunnel != 0 {
		return nil
	}
	if sh, ok := req.sess.hrule.(HTTPStreamHandler); ok {
		return sh.ResponseFilter()
	}
	if so.Expr == nil {
		return nil
	}
	return streamfilter.New(so.Expr, 0, nil)
}

// filterWhole filters a complete body (de-chunked) into sc.filtered.
func (sc *serverConn) filterWhole(f *streamfilter.Filter, body []byte) []byte {
	out := f.Write(sc.filtered[:0], body)
	out = f.Close(out)
	sc.filtered = out
	return out
}

// startFilter sets up the filtering of a streamed body: head, framed by
// its Content-Length or as chunked, loses that framing for chunked (an
// HTTP/1.1 client) or for the close that will end it. The result is the
// head to send.
func (sc *serverConn) startFilter(f *streamfilter.Filter, req *msg, head []byte, h *httpx.Head) []byte {
	bs := &sc.strm
	bs.filter, bs.chunkedIn, bs.unchunk = f, h.Chunked, httpx.Unchunker{}
	bs.chunkOut = requestMinor(req.b) >= 1 && !h.UntilClose
	sc.filterHead = httpx.SetChunked(sc.filterHead[:0], head, bs.chunkOut)
	return sc.filterHead
}

// filterPart filters part, the next bytes of the body bs streams as the
// member framed them, and appends to dst what goes to the client; end:
// they are the body's last.
func (sc *serverConn) filterPart(bs *bodyStream, dst, part []byte, end bool) []byte {
	data := part
	if bs.chunkedIn {
		var err error
		sc.plain, err = bs.unchunk.Append(sc.plain[:0], part)
		if err != nil {
			// The framer checked the chunks: this cannot happen.
			sc.e.logf("mblb: stream filter: chunked body from %s: %v", sc.leg.Member.Name, err)
		}
		data = sc.plain
	}
	out := bs.filter.Write(sc.filtered[:0], data)
	if end {
		out = bs.filter.Close(out)
	}
	sc.filtered = out
	if !bs.chunkOut {
		return append(dst, out...)
	}
	if len(out) > 0 {
		dst = strconv.AppendInt(dst, int64(len(out)), 16)
		dst = append(dst, "\r\n"...)
		dst = append(dst, out...)
		dst = append(dst, "\r\n"...)
	}
	if end {
		dst = append(dst, "0\r\n\r\n"...)
	}
	return dst
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
