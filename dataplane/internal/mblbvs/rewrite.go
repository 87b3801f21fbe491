package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// RewriteEnabled implements mblb.RewriteHandler: the rewrite profile
// maps the message unless the client's rules turned it off
// (REWRITE::disable; rules/commands_rewrite.go).
func (h *httpRules) RewriteEnabled(response bool) bool {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.RuleSession(irules.Program(r.rules)).Rewrite()
	return st == nil || !st.Off
}

var _ mblb.RewriteHandler = (*httpRules)(nil)

// OnRewriteRequest implements mblb.RewriteEventHandler: REWRITE_REQUEST
// (done false) or REWRITE_REQUEST_DONE over the request head as it is
// then, which HTTP:: commands read and edit there.
func (h *httpRules) OnRewriteRequest(head []byte, done bool) (out []byte, post bool, err error) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := rules.RewriteRequest
	if done {
		ev = rules.RewriteRequestDone
	}
	prog := irules.Program(r.rules)
	st := r.RuleSession(prog).Rewrite()
	if prog.Handles(ev) {
		if err := h.Request.Reset(head, false); err != nil {
			return nil, false, nil
		}
		h.HasRequest = true
		err = r.runEvent(ev)
		h.ClearActions()
		if err == nil && r.verdict != irules.GoOn {
			err = errRewriteVerdict
		}
		if err != nil {
			return nil, false, err
		}
		if h.Request.Modified() {
			out = h.Request.AppendTo(nil)
		}
		h.sentGen = h.Request.Gen()
	}
	if done && st != nil {
		post = st.TakePostProcess()
	}
	return out, post, nil
}

// RewriteResponseDone implements mblb.RewriteEventHandler: the rules
// have REWRITE_RESPONSE_DONE and REWRITE::post_process is on for the
// response (post: it was for its request; or it was turned on since, in
// HTTP_RESPONSE or REWRITE_RESPONSE, which this takes).
func (h *httpRules) RewriteResponseDone(post bool) bool {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules)
	if st := r.RuleSession(prog).Rewrite(); st != nil && st.TakePostProcess() {
		post = true
	}
	return post && prog.Handles(rules.RewriteResponseDone)
}

// OnRewriteResponse implements mblb.RewriteEventHandler:
// REWRITE_RESPONSE (done false) over the member's response head, or
// REWRITE_RESPONSE_DONE over the head and body (nil: not held) as the
// profile mapped them, with REWRITE::payload reading and replacing the
// body.
func (h *httpRules) OnRewriteResponse(x *mblb.HTTPEvent, head, body []byte, done bool) (outHead, outBody []byte, bodySet bool, err error) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := rules.RewriteResponse
	if done {
		ev = rules.RewriteResponseDone
	}
	prog := irules.Program(r.rules)
	st := r.RuleSession(prog).Rewrite()
	if !prog.Handles(ev) {
		return nil, nil, false, nil
	}
	defer h.requestOf(x)()
	if err := h.Response.Reset(head, true); err != nil {
		return nil, nil, false, nil
	}
	h.HasResponse = true
	if st != nil {
		st.Payload, st.Replaced = body, false
	}
	r.hx = x
	err = r.runEvent(ev)
	r.hx = nil
	h.ClearActions()
	if st != nil {
		outBody, bodySet = st.Payload, st.Replaced
		st.Payload, st.Replaced = nil, false
	}
	if err == nil && r.verdict != irules.GoOn {
		err = errRewriteVerdict
	}
	if err != nil {
		return nil, nil, false, err
	}
	if h.Response.Modified() {
		outHead = h.Response.AppendTo(nil)
	}
	return outHead, outBody, bodySet, nil
}

// errRewriteVerdict ends a client whose REWRITE_ event rejected or
// dropped it: the message is mid-way through the profile.
var errRewriteVerdict = errors.New("the rule ended the connection in a REWRITE_ event")

var _ mblb.RewriteEventHandler = (*httpRules)(nil)
