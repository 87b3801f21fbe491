package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/ssefilter"
	"github.com/openltm/openltm/rules"
)

// SSEPass implements mblb.HTTPSSEHandler: the sse profile's pass for the
// response whose HTTP_RESPONSE ran last, SSE_RESPONSE running from it for
// each event; nil when the rules do not handle SSE_RESPONSE, so that an
// event stream no rule reads passes unread.
func (h *httpRules) SSEPass(lim ssefilter.Limits) *ssefilter.Pass {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules) // (an httpRules has a program)
	if !prog.Handles(rules.SSEResponse) {
		return nil
	}
	r.RuleSession(prog) // (the connection's, made now when no event ran before)
	return ssefilter.New(lim, h.sseEvent)
}

// sseEvent runs SSE_RESPONSE over one event under the rules' lock (the
// server connection's reader calls it in the middle of the body). A rule
// that fails, rejects or drops ends the client.
func (h *httpRules) sseEvent(e *ssefilter.Event) {
	r := h.mblbRules
	r.mu.Lock()
	if r.sess == nil {
		r.mu.Unlock()
		return
	}
	r.verdict = irules.GoOn
	r.httpEv = rules.SSEResponse
	err := r.sess.RunSSE(e)
	r.httpEv = rules.RuleInit
	v := r.verdict
	r.mu.Unlock()
	if err != nil || v != irules.GoOn {
		// (Not at once: the server connection's reader is in the middle
		// of the response.)
		go r.f.sess.Close(err != nil || v == irules.Reject)
	}
}
