package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
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
