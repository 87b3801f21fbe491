package mblb

import (
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/rewrite"
)

// A rewrite profile in uri-translation mode (dataplane/rewrite) maps each
// request from the client's URI space to the server's once its
// HTTP_REQUEST rules ran (so they see what the client sent), and each
// response back before the stream filter and compression see it.
// Responses are held whole (up to the engine's MaxMessageSize) so that
// their bodies can be rewritten; one beyond it streams with its head
// rewritten and its body as it is [M]. A body that changes goes with its
// new Content-Length, or re-chunked as response-chunking says. Without
// the profile each message costs one nil check.

// RewriteHandler is implemented by an HTTPRuleHandler whose rules may
// turn the rewriting off and on (REWRITE::disable, REWRITE::enable) or
// run the REWRITE_ events.
type RewriteHandler interface {
	// RewriteEnabled says whether the message whose events ran last
	// is to be rewritten.
	RewriteEnabled(response bool) bool
}

// rewriteOn says whether the client's rules leave rewriting on.
func (s *ClientConn) rewriteOn(response bool) bool {
	if rh, ok := s.hrule.(RewriteHandler); ok {
		return rh.RewriteEnabled(response)
	}
	return true
}

// rewriteRequest maps the head of m (a whole request or the head of an
// upload) to the server's URI space and notes the rule it matched for
// its response.
func (s *ClientConn) rewriteRequest(rw *rewrite.Profile, m *msg) {
	if !s.rewriteOn(false) {
		return
	}
	scheme := s.e.cfg.Request.HTTP.Scheme
	if scheme == "" {
		scheme = "http"
	}
	hlen := m.hx.hlen
	r := rw.RewriteRequest(m.b[:hlen], scheme, s.client.Addr())
	m.hx.rewriteRule = int16(r.Rule + 1)
	if r.Head == nil {
		return
	}
	need := len(r.Head) + len(m.b) - hlen
	if need <= cap(m.b) {
		body := len(m.b) - hlen
		m.b = m.b[:need]
		copy(m.b[len(r.Head):], m.b[hlen:hlen+body]) // (memmove)
	} else {
		nb := make([]byte, need)
		copy(nb[len(r.Head):], m.b[hlen:])
		m.b, m.class = nb, -1 // (not pooled: its size is no class's)
	}
	copy(m.b, r.Head)
	m.hx.hlen = len(r.Head)
}

// rewriteResponse maps a response's head (head: as the rules left it,
// nil for the member's) and, when it is whole and HTML, CSS or
// JavaScript, its body, which then goes as the rules' bodies do
// (SetBody: re-framed with its new length).
func (sc *serverConn) rewriteResponse(rw *rewrite.Profile, req *msg, b []byte, h *httpx.Head, head []byte, x *HTTPEvent) ([]byte, *HTTPEvent) {
	if req.hx.connect || !req.sess.rewriteOn(true) {
		return head, x
	}
	base := head
	if base == nil {
		base = b[h.Start:h.HeaderEnd]
	}
	rule := int(req.hx.rewriteRule) - 1
	r := rw.RewriteResponse(base, rule)
	if r.Head != nil {
		head = r.Head
	}
	if r.Body == rewrite.BodyNone || sc.strm.head || req.httpHead || h.Status < 200 || h.Status == 204 || h.Status == 304 {
		return head, x
	}
	var body []byte
	switch {
	case x != nil && x.bodySet:
		body = x.body
	case h.Chunked:
		sc.plain, _ = httpx.Dechunk(sc.plain[:0], b[h.HeaderEnd:])
		body = sc.plain
	default:
		body = b[h.HeaderEnd:]
	}
	out, changed := rw.RewriteBody(sc.rewritten[:0], body, r.Body, rule)
	sc.rewritten = out[:0]
	if !changed {
		return head, x
	}
	if x == nil {
		x = &sc.hx
		x.reset(b, h, true, sc.leg.Remote)
	}
	if head == nil {
		head = base
	}
	x.SetBody(out)
	return head, x
}
