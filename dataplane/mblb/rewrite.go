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

// RewriteEventHandler is implemented by an HTTPRuleHandler whose rules
// may have the rewrite profile's events: REWRITE_REQUEST and
// REWRITE_RESPONSE just before a message is mapped, REWRITE_REQUEST_DONE
// just after a request is, REWRITE_RESPONSE_DONE after a response is
// (head and whole body) when REWRITE::post_process asked for it. Each
// returns the head the rules edited (nil: as it was); an error ends the
// client.
type RewriteEventHandler interface {
	// OnRewriteRequest runs REWRITE_REQUEST (done false) or
	// REWRITE_REQUEST_DONE over head; post: REWRITE::post_process is on
	// for the request's response.
	OnRewriteRequest(head []byte, done bool) (out []byte, post bool, err error)
	// RewriteResponseDone says whether REWRITE_RESPONSE_DONE runs for
	// the response at hand: the rules have it, and REWRITE::post_process
	// was on for its request (post) or turned on since.
	RewriteResponseDone(post bool) bool
	// OnRewriteResponse runs REWRITE_RESPONSE (done false) over the
	// member's head, or REWRITE_RESPONSE_DONE over the mapped head and
	// body (nil: the body streams); bodySet: REWRITE::payload replaced
	// the body with outBody.
	OnRewriteResponse(x *HTTPEvent, head, body []byte, done bool) (outHead, outBody []byte, bodySet bool, err error)
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
	rh, _ := s.hrule.(RewriteEventHandler)
	if rh != nil && !s.rewriteEvent(rh, m, false) {
		return
	}
	r := rw.RewriteRequest(m.b[:m.hx.hlen], scheme, s.client.Addr())
	m.hx.rewriteRule = int16(r.Rule + 1)
	if r.Head != nil {
		setRequestHead(m, r.Head)
	}
	if rh != nil {
		s.rewriteEvent(rh, m, true)
	}
}

// rewriteEvent runs REWRITE_REQUEST or REWRITE_REQUEST_DONE over m's
// head and puts in the head the rules left; false when the rules ended
// the client.
func (s *ClientConn) rewriteEvent(rh RewriteEventHandler, m *msg, done bool) bool {
	out, post, err := rh.OnRewriteRequest(m.b[:m.hx.hlen], done)
	if err != nil {
		s.e.logf("mblb: a REWRITE_ event ended the client: %v", err)
		go s.Close(true) // (not here: the request is being decided)
		return false
	}
	if out != nil {
		setRequestHead(m, out)
	}
	m.hx.rewritePost = m.hx.rewritePost || post
	return true
}

// setRequestHead puts head in place of m's head, its body kept.
func setRequestHead(m *msg, head []byte) {
	hlen := m.hx.hlen
	need := len(head) + len(m.b) - hlen
	if need <= cap(m.b) {
		body := len(m.b) - hlen
		m.b = m.b[:need]
		copy(m.b[len(head):], m.b[hlen:hlen+body]) // (memmove)
	} else {
		nb := make([]byte, need)
		copy(nb[len(head):], m.b[hlen:])
		m.b, m.class = nb, -1 // (not pooled: its size is no class's)
	}
	copy(m.b, head)
	m.hx.hlen = len(head)
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
	rh, _ := req.sess.hrule.(RewriteEventHandler)
	if rh != nil {
		x = sc.rewriteView(x, req, b, h)
		nh, _, _, err := rh.OnRewriteResponse(x, base, nil, false)
		if err != nil {
			return sc.rewriteFailed(req, err, head, x)
		}
		if nh != nil {
			head, base = nh, nh
		}
	}
	rule := int(req.hx.rewriteRule) - 1
	r := rw.RewriteResponse(base, rule)
	if r.Head != nil {
		head = r.Head
	}
	whole := !sc.strm.head && !req.httpHead && h.Status >= 200 && h.Status != 204 && h.Status != 304
	done := rh != nil && rh.RewriteResponseDone(req.hx.rewritePost)
	var body []byte
	if whole && (r.Body != rewrite.BodyNone || done) {
		switch {
		case x != nil && x.bodySet:
			body = x.body
		case h.Chunked:
			sc.plain, _ = httpx.Dechunk(sc.plain[:0], b[h.HeaderEnd:])
			body = sc.plain
		default:
			body = b[h.HeaderEnd:]
		}
	}
	if whole && r.Body != rewrite.BodyNone {
		out, changed := rw.RewriteBody(sc.rewritten[:0], body, r.Body, rule)
		sc.rewritten = out[:0]
		if changed {
			x = sc.rewriteView(x, req, b, h)
			if head == nil {
				head = base
			}
			x.SetBody(out)
			body = out
		}
	}
	if done {
		if head == nil {
			head = base
		}
		if !whole {
			body = nil
		}
		nh, nb, set, err := rh.OnRewriteResponse(x, head, body, true)
		if err != nil {
			return sc.rewriteFailed(req, err, head, x)
		}
		if nh != nil {
			head = nh
		}
		if set && whole {
			x.SetBody(nb)
		}
	}
	return head, x
}

// rewriteView is x, or the server connection's event view of the
// response h to req when the rules have not run on it yet.
func (sc *serverConn) rewriteView(x *HTTPEvent, req *msg, b []byte, h *httpx.Head) *HTTPEvent {
	if x != nil {
		return x
	}
	x = &sc.hx
	x.reset(b, h, true, sc.leg.Remote)
	x.request, x.requestNum, x.sess = req.b, req.seq+1, req.sess
	return x
}

// rewriteFailed resets the client of a response whose REWRITE_ event
// failed or ended it (as a failed HTTP_RESPONSE does), once the server
// connection's reader is out of the response.
func (sc *serverConn) rewriteFailed(req *msg, err error, head []byte, x *HTTPEvent) ([]byte, *HTTPEvent) {
	sc.e.logf("mblb: a REWRITE_ event ended the client: %v", err)
	go req.sess.Close(true)
	x.closeAfter = true
	return head, x
}
