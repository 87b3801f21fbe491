package mblbvs

import (
	"errors"
	"fmt"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// httpRules is the rule view of a client of an HTTP virtual (an http
// profile): the message-balanced client's view plus rules.HTTPState, so
// that HTTP:: commands read and edit the head the engine's framer parsed.
// Only these clients implement rules.HTTPConn: on any other virtual the
// HTTP:: commands stay errors.
type httpRules struct {
	*mblbRules
	rules.HTTPState
	handlesReq, handlesResp bool
	// older is the request a response answers when the client has
	// pipelined others after it (parsed again: the rare path), used
	// while useOlder.
	older    rules.HTTPHead
	useOlder bool
}

// HTTPRequest implements rules.HTTPConn: in HTTP_RESPONSE, the request
// that response answers.
func (h *httpRules) HTTPRequest() *rules.HTTPHead {
	if h.useOlder {
		return &h.older
	}
	return h.HTTPState.HTTPRequest()
}

// newHTTPRules gives r its HTTP half when its program handles an event
// that reads the request, and returns the engine's handler for the HTTP
// events (nil otherwise).
func newHTTPRules(r *mblbRules) *httpRules {
	prog := irules.Program(r.rules)
	if prog == nil {
		return nil
	}
	h := &httpRules{mblbRules: r,
		handlesReq:  prog.Handles(rules.HTTPRequest),
		handlesResp: prog.Handles(rules.HTTPResponse)}
	// LB_SELECTED, LB_FAILED and PERSIST_DOWN read the request too (and
	// LB_FAILED and PERSIST_DOWN may answer it).
	if !h.handlesReq && !h.handlesResp && !prog.Handles(rules.LBSelected) && !prog.Handles(rules.LBFailed) &&
		!prog.Handles(rules.PersistDown) {
		return nil
	}
	r.self = h
	r.http = h
	return h
}

var (
	_ mblb.HTTPRuleHandler = (*httpRules)(nil)
	_ rules.HTTPConn       = (*httpRules)(nil)
)

// OnHTTPRequest implements mblb.HTTPRuleHandler: HTTP_REQUEST over the
// framer's head (no second parse), then the rule's results handed back
// to the engine.
func (h *httpRules) OnHTTPRequest(x *mblb.HTTPEvent) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	h.StartRequest(x.Message(), x.Head())
	if !h.handlesReq {
		return nil
	}
	return h.event(x, rules.HTTPRequest, &h.Request)
}

// OnHTTPResponse implements mblb.HTTPRuleHandler (HTTP_RESPONSE).
func (h *httpRules) OnHTTPResponse(x *mblb.HTTPEvent) error {
	if !h.handlesResp {
		return nil
	}
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	h.StartResponse(x.Message(), x.Head())
	if n := int(x.RequestNum()); n != h.RequestNum && h.older.Reset(x.Request(), false) == nil {
		cur := h.RequestNum
		h.useOlder, h.RequestNum = true, n
		defer func() { h.useOlder, h.RequestNum = false, cur }()
	}
	return h.event(x, rules.HTTPResponse, &h.Response)
}

// event runs ev with x as the event's message and applies what the rule
// did: its verdict, its HTTP actions, its edits of head. The caller holds
// the rule lock.
func (h *httpRules) event(x *mblb.HTTPEvent, ev rules.Event, head *rules.HTTPHead) error {
	r := h.mblbRules
	r.hx = x
	err := r.runEvent(ev)
	r.hx = nil
	defer h.ClearActions()
	if err != nil {
		return err
	}
	switch r.verdict {
	case irules.Reject:
		x.Reject()
		return nil
	case irules.Drop:
		x.Drop()
		return nil
	case irules.Close:
		x.CloseAfter()
	}
	for i := range h.Actions {
		a := &h.Actions[i]
		switch a.Kind {
		case rules.HTTPRespond:
			x.Respond(a.Data, a.KeepAlive && !a.Reset)
			if a.Reset {
				x.ResetAfter()
			}
		case rules.HTTPClose:
			x.CloseAfter()
		}
	}
	if head.Modified() {
		x.SetHead(head.AppendTo(x.HeadBuffer()))
	}
	return nil
}

// HTTPDo implements rules.HTTPConn: the actions this data path carries
// out are queued; the others are refused, so that a rule relying on one
// fails visibly instead of being half obeyed.
func (h *httpRules) HTTPDo(a rules.HTTPAction) error {
	switch a.Kind {
	case rules.HTTPRespond, rules.HTTPClose:
		if h.hx == nil && (!h.lbFailed || a.Kind != rules.HTTPRespond) {
			return fmt.Errorf("%s works in HTTP_REQUEST and HTTP_RESPONSE (HTTP::respond also in LB_FAILED) on this virtual server", a.Kind)
		}
		return h.HTTPState.HTTPDo(a)
	}
	return fmt.Errorf("%s is not supported yet on this virtual server", a.Kind)
}

// errHTTPResponseDecision refuses load-balancing decisions made while a
// response is handled.
var errHTTPResponseDecision = errors.New("a pool, member or node decision applies to requests: make it in HTTP_REQUEST")
