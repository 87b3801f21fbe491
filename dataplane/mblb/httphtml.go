package mblb

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/httpx"
)

// An html profile on an HTTP virtual applies its html rules
// (dataplane/htmlfilter) to the bodies of responses whose Content-Type
// is one of its content-selection types, as they stream: before the
// stream filter and the compressor, framed as they frame a body they
// change (a whole body with its new Content-Length, a streamed one
// re-chunked, or ended by the close for an HTTP/1.0 client). Requests
// go to the member without Accept-Encoding, so that it answers in a
// form the profile can read; a response that comes encoded all the same
// passes unchanged [M].

// HTMLOptions are the html profile's settings as the engine applies
// them.
type HTMLOptions struct {
	// Profile names the html profile (for logs).
	Profile string
	// Rules are the profile's html rules, compiled.
	Rules *htmlfilter.Rules
	// Types are content-selection, in lower case: a response whose
	// Content-Type (without its parameters) is one of them is parsed.
	Types []string
}

// selects reports whether the Content-Type value ct is one of o's types.
func (o *HTMLOptions) selects(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	for _, t := range o.Types {
		if httpx.EqualFold(ct, t) {
			return true
		}
	}
	return false
}

// HTTPHTMLHandler is implemented by an HTTPRuleHandler on a virtual with
// an html profile: the rules may switch the profile off for a response
// (HTML::disable), and run HTML_TAG_MATCHED and HTML_COMMENT_MATCHED for
// what the tag-raise-event and comment-raise-event rules match.
type HTTPHTMLHandler interface {
	// HTMLPass is the pass for the body of the response whose
	// HTTP_RESPONSE ran last, over rs; nil when the rules switched the
	// profile off for it.
	HTMLPass(rs *htmlfilter.Rules) *htmlfilter.Pass
}

// htmlPass is the html profile's pass for the body of the response h to
// req (framed in b; head is its head as the rules left it, nil: as it
// came), nil without an html profile (the one check a
// virtual without one pays), when the response has no body to parse,
// is not of a selected type, or comes encoded.
func (sc *serverConn) htmlPass(req *msg, head, b []byte, h *httpx.Head) *htmlfilter.Pass {
	o := sc.e.cfg.Request.HTTP.HTML
	if o == nil {
		return nil
	}
	if head = passHead(req, head, b, h); head == nil {
		return nil
	}
	hh := httpx.Head{HeaderEnd: len(head)}
	if !o.selects(httpx.HeaderValue(head, &hh, "content-type")) || !plainBody(head, &hh) {
		return nil
	}
	if hh, ok := req.sess.hrule.(HTTPHTMLHandler); ok {
		return hh.HTMLPass(o.Rules)
	}
	return o.Rules.New(nil, nil)
}

// passHead is the head a response body's pass (html, sse) reads the
// response h to req by: head as the rules left it, else as it came in b;
// nil when the response has no body to pass (to a HEAD or a CONNECT, a
// tunnel, 1xx, 204, 304, an upgrade).
func passHead(req *msg, head, b []byte, h *httpx.Head) []byte {
	if req.httpHead || h.Status < 200 || h.Status == 204 || h.Status == 304 || req.hx.connect || req.hx.tunnel != 0 || h.Upgrade {
		return nil
	}
	if head == nil {
		head = b[h.Start:h.HeaderEnd]
	}
	return head
}

// plainBody reports whether the response whose head is head (hh its
// framing) comes without a content encoding, or as identity: a body a
// pass can read.
func plainBody(head []byte, hh *httpx.Head) bool {
	ce := bytes.TrimSpace(httpx.HeaderValue(head, hh, "content-encoding"))
	return len(ce) == 0 || httpx.EqualFold(ce, "identity")
}

// htmlWhole passes a whole body, chunked as its sender framed it or not,
// through sc.html, which it then drops.
func (sc *serverConn) htmlWhole(body []byte, chunked bool) []byte {
	if chunked {
		// (The framer checked the chunks: no error can come.)
		sc.plain, _ = httpx.Dechunk(sc.plain[:0], body)
		body = sc.plain
	}
	sc.htmlOut = sc.html.Close(sc.html.Write(sc.htmlOut[:0], body))
	sc.html = nil
	return sc.htmlOut
}
