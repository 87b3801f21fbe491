package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// The sip profile's events. SIP_REQUEST runs for every SIP request,
// whichever side sent it, SIP_RESPONSE for every response, under the
// client's rule lock like its other events; what the rule did (a header
// edited, SIP::discard, SIP::respond, a pool, member or node, or a
// persist uie, hash, source_addr or none for a request of the client)
// goes back to the engine with the message. A
// reject or drop ends the client as in any event. SIP_REQUEST_SEND and
// SIP_RESPONSE_SEND run as a message is about to leave (the member it
// goes to, or came from, is the server side), the done events once it
// has: the engine calls OnSIPSend around each write (mblb send).

// sipPersistDecision is a SIP_REQUEST's persist command: set, with the
// encoded key ("" for persist none).
type sipPersistDecision struct {
	key string
	set bool
}

// sipRules implements mblb.SIPRuleHandler for one client.
type sipRules struct {
	r         *mblbRules
	req, resp bool
	// The send and done events handled: SIP_REQUEST_SEND,
	// SIP_RESPONSE_SEND, SIP_REQUEST_DONE, SIP_RESPONSE_DONE.
	reqSend, respSend, reqDone, respDone bool
}

// newSIPRules is the client's SIP handler, nil when its rules handle no
// SIP event.
func newSIPRules(r *mblbRules) *sipRules {
	prog := irules.Program(r.rules)
	if prog == nil {
		return nil
	}
	h := &sipRules{r: r, req: prog.Handles(rules.SIPRequest), resp: prog.Handles(rules.SIPResponse),
		reqSend: prog.Handles(rules.SIPRequestSend), respSend: prog.Handles(rules.SIPResponseSend),
		reqDone: prog.Handles(rules.SIPRequestDone), respDone: prog.Handles(rules.SIPResponseDone)}
	if !h.req && !h.resp && !h.reqSend && !h.respSend && !h.reqDone && !h.respDone {
		return nil
	}
	return h
}

// SIPSends implements mblb.SIPRuleHandler.
func (h *sipRules) SIPSends() (send, done bool) {
	return h.reqSend || h.respSend, h.reqDone || h.respDone
}

// OnSIPSend implements mblb.SIPRuleHandler: the send and done events,
// with the member the message goes to (or came from) as the server side
// (LB::server, IP::server_addr).
func (h *sipRules) OnSIPSend(x *mblb.SIPEvent, request, done bool) error {
	ev, on := rules.SIPResponseSend, h.respSend
	switch {
	case request && done:
		ev, on = rules.SIPRequestDone, h.reqDone
	case request:
		ev, on = rules.SIPRequestSend, h.reqSend
	case done:
		ev, on = rules.SIPResponseDone, h.respDone
	}
	if !on {
		return nil
	}
	return h.run(x, ev)
}

// errSIPRule ends a client whose SIP rule rejected or dropped it.
var errSIPRule = errors.New("a SIP rule ended the connection")

// OnSIPRequest implements mblb.SIPRuleHandler (SIP_REQUEST).
func (h *sipRules) OnSIPRequest(x *mblb.SIPEvent) error {
	if !h.req {
		return nil
	}
	return h.run(x, rules.SIPRequest)
}

// OnSIPResponse implements mblb.SIPRuleHandler (SIP_RESPONSE).
func (h *sipRules) OnSIPResponse(x *mblb.SIPEvent) error {
	if !h.resp {
		return nil
	}
	return h.run(x, rules.SIPResponse)
}

func (h *sipRules) run(x *mblb.SIPEvent, ev rules.Event) error {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules)
	if prog == nil {
		return nil
	}
	sess := r.RuleSession(prog)
	sess.BeginSIP(x.Message())
	if srv := x.Server(); srv.IsValid() {
		was := r.server
		r.server = srv
		defer func() { r.server = was }()
	}
	// A pool, member or node decision directs this message only; it
	// lands where PERSIST_DOWN's and LB_FAILED's do (selectTarget).
	var target mblb.Target
	var pd sipPersistDecision
	if ev == rules.SIPRequest && x.FromClient() {
		r.pdTarget, r.sipPersist = &target, &pd
	}
	err := r.runEvent(ev)
	r.pdTarget, r.sipPersist = nil, nil
	st := sess.EndSIP()
	if err != nil {
		return err
	}
	if r.verdict != irules.GoOn {
		return errSIPRule
	}
	if st.Edited {
		x.Replace(st.Msg)
	}
	if !target.IsZero() {
		x.Select(target)
	}
	if pd.set {
		x.Persist(pd.key)
	}
	if st.Reply != nil {
		x.Respond(st.Reply)
	}
	if st.Discard {
		x.Discard()
	}
	return nil
}
