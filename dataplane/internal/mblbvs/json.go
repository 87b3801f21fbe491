package mblbvs

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// The json profile (mblb.JSONOptions): a request or response whose
// Content-Type is JSON has its body parsed, after the HTTP events that
// may collect or replace it (HTTP_REQUEST_DATA, HTTP_RESPONSE_DATA) and
// before the message goes on: JSON_REQUEST or JSON_RESPONSE run over the
// document, *_MISSING when there is no body, *_ERROR when it does not
// parse or passes maximum-bytes or maximum-entries. A document a rule
// edited is rendered back as the body, with its new Content-Length.
// Without a JSON_ event in the virtual's rules nothing is parsed.

// handlesJSON reports which sides' JSON_ events prog handles: 1 the
// request's, 2 the response's.
func handlesJSON(prog *rules.Program) uint8 {
	var n uint8
	if prog.Handles(rules.JSONRequest) || prog.Handles(rules.JSONRequestMissing) || prog.Handles(rules.JSONRequestError) {
		n |= 1
	}
	if prog.Handles(rules.JSONResponse) || prog.Handles(rules.JSONResponseMissing) || prog.Handles(rules.JSONResponseError) {
		n |= 2
	}
	return n
}

func isJSONEvent(ev rules.Event) bool {
	return ev >= rules.JSONRequest && ev <= rules.JSONResponseError
}

// isJSONType reports whether a Content-Type value names JSON:
// application/json, or any type with a +json suffix [M: F5 names
// application/json only].
func isJSONType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	return bytes.EqualFold(ct, []byte("application/json")) ||
		len(ct) > 5 && bytes.EqualFold(ct[len(ct)-5:], []byte("+json")) && bytes.IndexByte(ct, '/') > 0
}

// jsonSide is the message's side of the json profile: whether its rules
// handle it and its content type is JSON.
func (h *httpRules) jsonSide(x *mblb.HTTPEvent, head *rules.HTTPHead) bool {
	if h.handlesJSON == 0 || x.Decided() {
		return false
	}
	bit := uint8(1)
	if x.IsResponse() {
		bit = 2
	}
	if h.handlesJSON&bit == 0 {
		return false
	}
	ct, ok := head.Header("Content-Type")
	return ok && isJSONType(ct)
}

// jsonAwait asks the engine, for a streamed JSON body (Partial) of a
// Content-Length within maximum-bytes, for the whole of it before the
// message goes on (OnHTTPRequestData, OnHTTPResponseData then run the
// JSON_ event); true when it asked.
func (h *httpRules) jsonAwait(x *mblb.HTTPEvent, head *rules.HTTPHead) bool {
	if !x.Partial() || !h.jsonSide(x, head) {
		return false
	}
	o := h.f.mv.cfg.Request.HTTP.JSON
	if !x.CanAwait() {
		return false
	}
	if x.Head().Chunked {
		// Up to one byte past the maximum: a longer body is an error
		// once that much is in.
		if _, err := httpx.Dechunk(nil, x.Body()); err == nil {
			return false
		}
		x.Await(o.MaxBytes + 1)
		return true
	}
	cl := x.Head().ContentLength
	if cl < 0 || cl > int64(o.MaxBytes) || len(x.Body()) >= int(cl) {
		return false
	}
	x.Await(int(cl))
	return true
}

// jsonEvent runs the message's JSON_ event when it has a JSON body (or
// none where one was due), and sends an edited document as the body.
// The caller holds the rule lock.
func (h *httpRules) jsonEvent(x *mblb.HTTPEvent, head *rules.HTTPHead) error {
	if !h.jsonSide(x, head) {
		return nil
	}
	o := h.f.mv.cfg.Request.HTTP.JSON
	ev, missing, bad := rules.JSONRequest, rules.JSONRequestMissing, rules.JSONRequestError
	if x.IsResponse() {
		ev, missing, bad = rules.JSONResponse, rules.JSONResponseMissing, rules.JSONResponseError
	}
	body, k, ok := wholeBody(x, &h.jsonBuf)
	if !ok {
		return h.event(x, bad, head)
	}
	if len(body) == 0 {
		return h.event(x, missing, head)
	}
	d, err := rules.ParseJSON(body, rules.JSONLimits{MaxBytes: o.MaxBytes, MaxEntries: o.MaxEntries})
	if err != nil {
		return h.event(x, bad, head)
	}
	s := h.RuleSession(irules.Program(h.rules))
	s.SetJSON(d)
	err = h.event(x, ev, head)
	s.SetJSON(nil)
	if err != nil || x.Decided() || !d.Modified() {
		return err
	}
	out := d.Render()
	if x.Partial() {
		x.ReplaceStart(k, out)
	} else {
		x.SetBody(out)
	}
	return nil
}

// wholeBody is the body a json or xml profile parses: a replacement an
// earlier event made, the held body de-chunked into *buf, or all of a
// streamed one when the engine holds it; ok false when it is not all
// there (streamed past the profile's bound or the engine's message
// size). k is, for a streamed body, the length of the start a new body
// replaces (ReplaceStart).
func wholeBody(x *mblb.HTTPEvent, buf *[]byte) (body []byte, k int, ok bool) {
	if b, k, ok := x.NewBody(); ok {
		return b, k, true
	}
	if x.Partial() && !x.Head().Chunked {
		cl := x.Head().ContentLength
		if cl < 0 || len(x.Body()) < int(cl) {
			return nil, 0, false
		}
		return x.Body()[:cl], int(cl), true
	}
	if x.Head().Chunked {
		// (A streamed one is whole when its last chunk is in.)
		var err error
		*buf, err = httpx.Dechunk((*buf)[:0], x.Body())
		if err != nil {
			return nil, 0, false
		}
		return *buf, len(*buf), true
	}
	return x.Body(), 0, true
}
