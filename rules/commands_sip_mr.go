package rules

import (
	"github.com/openltm/openltm/dataplane/sipmsg"
	"github.com/openltm/openltm/rules/tcl"
)

// The SIP:: and SDP:: commands in the MR_ events of a virtual with SIP
// message routing (`ltm message-routing sip`): BIG-IP lets a rule read
// and change the SIP message being routed in MR_INGRESS, MR_EGRESS and
// MR_FAILED as in SIP_REQUEST and SIP_RESPONSE. The message is the one
// the MR:: commands act on: an edit (SIP::header, SIP::message, the
// SDP:: rewrites) changes it at once, SIP::discard drops it and
// SIP::respond answers its client. The commands that decide a request's
// fate before routing (SIP::respond, setting SIP::persist, SIP::route)
// run in MR_INGRESS only, SIP::route in MR_FAILED too, where it sends
// the request elsewhere with MR::retry [M: F5 documents SIP::persist in
// SIP_REQUEST and MR_INGRESS; the others follow it]. SIP::response code
// is empty for a request, which is how a rule tells the two apart.

// sipMR binds the MR_ event's message to the SIP:: commands, or says why
// cmd cannot run: the router is not SIP's, or cmd decides before routing
// and the event is not MR_INGRESS.
func sipMR(s *ConnState, cmd string, valid []Event) (*SIPState, sipmsg.Message, error) {
	if s.mr == nil || s.mr.msg == nil || s.mr.router == nil || s.mr.router.Config().Proto == nil ||
		s.mr.router.Config().Proto.Name() != "sip" {
		return nil, sipmsg.Message{}, tcl.Errorf("%s: not valid in %s (valid in the MR_ events of a virtual with SIP message routing)", cmd, s.event)
	}
	if len(valid) == 1 && valid[0] == SIPRequest && s.event != MRIngress && (cmd != "SIP::route" || s.event != MRFailed) {
		return nil, sipmsg.Message{}, tcl.Errorf("%s: not valid in %s (valid in SIP_REQUEST and MR_INGRESS)", cmd, s.event)
	}
	if s.sip == nil {
		s.sip = &SIPState{}
	}
	st, m := s.sip, s.mr.msg
	if st.mr != m {
		st.Reset(nil)
		st.mr = m
	}
	st.Msg, st.Discard = m.Data, m.Drop
	st.PersistKey, st.PersistSet = m.Persist, m.Persist != ""
	pm, err := sipmsg.Parse(m.Data)
	if err != nil {
		return nil, pm, tcl.Errorf("%s: %v", cmd, err)
	}
	return st, pm, nil
}

// set makes msg the message at hand: a rule's edit.
func (st *SIPState) set(msg []byte) {
	st.Msg, st.Edited = msg, true
	if st.mr != nil {
		st.mr.Data = msg
	}
}

// reply is SIP::respond's answer: kept for the host after SIP_REQUEST,
// sent to the client at once in MR_INGRESS.
func (st *SIPState) reply(b []byte) error {
	st.Reply = b
	if st.mr == nil {
		return nil
	}
	if o := st.mr.Originator(); o != nil {
		if err := o.Send(b); err != nil {
			return tcl.Errorf("SIP::respond: the client cannot be written: %v", err)
		}
	}
	return nil
}
