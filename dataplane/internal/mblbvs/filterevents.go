package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// HTTP_REJECT and HTTP_DISABLED: the engine calls them once the client's
// HTTP filter rejected a request or went into passthrough (mblb's
// HTTPFilterEvents says where). They run with no message in hand: a rule
// there logs, counts, or reads HTTP::reject_reason and
// HTTP::passthrough_reason; reject or drop in either resets the client
// (in HTTP_REJECT, one that would have been answered 400).

var _ mblb.HTTPFilterEvents = (*httpRules)(nil)

// OnHTTPReject implements mblb.HTTPFilterEvents.
func (h *httpRules) OnHTTPReject() bool { return h.filterEvent(rules.HTTPReject) }

// OnHTTPDisabled implements mblb.HTTPFilterEvents.
func (h *httpRules) OnHTTPDisabled() bool { return h.filterEvent(rules.HTTPDisabled) }

// filterEvent runs HTTP_REJECT or HTTP_DISABLED and reports whether the
// client is to be reset: the rule's reject or drop, or its failure.
func (h *httpRules) filterEvent(ev rules.Event) bool {
	if !h.handlesFilter {
		return false
	}
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.runEvent(ev)
	reset := r.verdict == irules.Reject || r.verdict == irules.Drop
	r.verdict = irules.GoOn
	h.ClearActions()
	return reset || err != nil
}
