package mblb

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/ssefilter"
)

// An sse profile on an HTTP virtual reads the bodies of responses whose
// Content-Type is text/event-stream event by event as they stream
// (dataplane/ssefilter), and the rules' SSE_RESPONSE runs for each
// event as it passes: nothing waits for the end of the body, which for
// an event stream may never come. A stream the rules leave alone passes
// unchanged; one they change is re-framed as a stream filter's is
// (re-chunked for an HTTP/1.1 client, ended by the close for an
// HTTP/1.0 one). The sse pass runs before the html profile, the stream
// filter and the compressor. A response that comes encoded passes
// unread [M], as the html profile's does.

// SSEOptions are the sse profile's settings as the engine applies them.
type SSEOptions struct {
	// Profile names the sse profile (for logs).
	Profile string
	// Limits are max-buffered-msg-bytes and max-field-name-size.
	Limits ssefilter.Limits
}

// HTTPSSEHandler is implemented by an HTTPRuleHandler on a virtual with
// an sse profile: SSEPass is the pass for the body of the response whose
// HTTP_RESPONSE ran last, nil when the rules do not handle SSE_RESPONSE
// (then the body passes as it comes, unread).
type HTTPSSEHandler interface {
	SSEPass(lim ssefilter.Limits) *ssefilter.Pass
}

// ssePass is the sse profile's pass for the body of the response h to
// req (framed in b; head is its head as the rules left it, nil: as it
// came), nil without an sse profile (the one check a virtual without
// one pays), when the response has no body, is not an event stream,
// comes encoded, or the rules have no SSE_RESPONSE.
func (sc *serverConn) ssePass(req *msg, head, b []byte, h *httpx.Head) *ssefilter.Pass {
	o := sc.e.cfg.Request.HTTP.SSE
	if o == nil {
		return nil
	}
	if head = passHead(req, head, b, h); head == nil {
		return nil
	}
	hh := httpx.Head{HeaderEnd: len(head)}
	ct := httpx.HeaderValue(head, &hh, "content-type")
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if !httpx.EqualFold(bytes.TrimSpace(ct), "text/event-stream") {
		return nil
	}
	if !plainBody(head, &hh) {
		return nil
	}
	sh, ok := req.sess.hrule.(HTTPSSEHandler)
	if !ok {
		return nil
	}
	return sh.SSEPass(o.Limits)
}

// sseWhole passes a whole body, chunked as its sender framed it or not,
// through sc.sse, which it then drops.
func (sc *serverConn) sseWhole(body []byte, chunked bool) []byte {
	if chunked {
		// (The framer checked the chunks: no error can come.)
		sc.plain, _ = httpx.Dechunk(sc.plain[:0], body)
		body = sc.plain
	}
	sc.sseOut = sc.sse.Close(sc.sse.Write(sc.sseOut[:0], body))
	sc.sse = nil
	return sc.sseOut
}
