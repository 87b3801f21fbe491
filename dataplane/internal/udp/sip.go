package udp

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/sipmsg"
	"github.com/openltm/openltm/rules"
)

// SIP over UDP (the sip profile on a UDP virtual): each datagram is one
// SIP message (RFC 3261 §18.1) and is balanced by itself, as
// datagram-load-balancing does; answers go back to the client the flow
// belongs to. With sip_info persistence a datagram's Call-ID (or the
// profile's sip-info field) picks the member its dialog went to, and
// every datagram refreshes that record. A datagram that is not a SIP
// message (a keep-alive, garbage) goes to no member [M].
//
// The rules' SIP_REQUEST and SIP_RESPONSE run as over TCP
// (dataplane/internal/mblbvs/sip.go), on every SIP message either way:
// a client's after CLIENT_DATA and before the proxy settings and
// balancing see it, a member's after SERVER_DATA. The SIP:: commands
// read and edit the message (rules.ConnState.BeginSIP binds it);
// SIP::discard drops it, SIP::respond answers a request back where it
// came from (the request still goes on unless discarded [M]), and a
// pool, member, node or persist decision in a client's message directs
// that message alone, as over TCP: the flow's decisions from before the
// event are given back once it is sent (sipRuleDone). In a member's
// message those decisions are given back at once [M: a member's message
// is not balanced]; `persist` there still records the member at once,
// as on any server-side event. An edit that is not a SIP message drops
// it [M: over TCP the sender is reset; a datagram has no connection].
// Without a handler of either event a message costs one bit test; a flow
// without rules, a nil check. SIP_REQUEST_SEND and SIP_RESPONSE_SEND run
// just before a message leaves (sipOut: a client's request once its
// member is chosen and the profile's headers are on it), the done
// events just after (sipSent), with the member's leg as the server side.

// sipKept is a flow's target and persist decisions from before a SIP
// event, given back once its message is dealt with.
type sipKept struct {
	target   irules.Target
	persist  rulePersistState
	persists bool // the reader's: f.persists and f.pers
	pers     persistDecision
}

// sipEvent is the event for message m.
func sipEvent(m *sipmsg.Message) config.Event {
	if m.Request {
		return config.EventSIPRequest
	}
	return config.EventSIPResponse
}

// sipIn takes a client's datagram as a SIP message: parsed, through
// SIP_REQUEST or SIP_RESPONSE when a rule handles it, then keyed for
// sip_info persistence. ok false drops it (counted when it is not SIP);
// ruled says the rule's decisions hold until sipRuleDone.
func (f *flow) sipIn(b []byte, sc *config.SIPDatagram) (m sipmsg.Message, out []byte, ruled, ok bool) {
	if sipmsg.IsKeepAlive(b) {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return m, nil, false, false
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return m, nil, false, false
	}
	if ev := sipEvent(&m); f.rs != nil && f.handles(ev) {
		rs := f.rs
		rs.sipKept.persists, rs.sipKept.pers = f.persists, f.pers
		if b, ok = f.sipRule(ev, nil, &m, b); !ok {
			f.sipRuleDone()
			return m, nil, false, false
		}
		ruled = true
	}
	f.sipPersist(&m, sc)
	return m, b, ruled, true
}

// sipFromMember runs SIP_REQUEST or SIP_RESPONSE on a member's datagram
// when a rule handles it; false drops it. A datagram that is not SIP
// goes on as it is.
func (f *flow) sipFromMember(lg *leg, b []byte) ([]byte, bool) {
	if !f.handles(config.EventSIPRequest) && !f.handles(config.EventSIPResponse) {
		return b, true // not parsed for nothing
	}
	if sipmsg.IsKeepAlive(b) {
		return b, true
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		return b, true
	}
	ev := sipEvent(&m)
	if !f.handles(ev) {
		return b, true
	}
	return f.sipRule(ev, lg, &m, b)
}

// sipRule runs ev on message m (datagram b) of the client (lg nil) or
// of lg's member, carries out SIP::respond, and returns the message to
// pass on, m then parsed from it; false drops it.
func (f *flow) sipRule(ev config.Event, lg *leg, m *sipmsg.Message, b []byte) ([]byte, bool) {
	var st rules.SIPState
	out, fwd, _, ok := f.runMsg(ev, lg, b, &st)
	if !ok || !fwd {
		return nil, false
	}
	if st.Reply != nil {
		if lg == nil {
			f.toClient(st.Reply)
		} else {
			if f.clone != nil {
				f.clone.Server(st.Reply)
			}
			lg.send(st.Reply)
		}
	}
	if st.Discard {
		return nil, false
	}
	if st.Edited {
		out = st.Msg
	} else if len(out) == len(b) && (len(b) == 0 || &out[0] == &b[0]) {
		return b, true // m is still the message
	}
	em, err := sipmsg.Parse(out)
	if err != nil {
		f.l.e.env.Log.Error("TCL error: " + f.Virtual + " <" + string(ev) + "> - the rule's edit is not a SIP message, dropped")
		return nil, false
	}
	*m = em
	return out, true
}

// sipOut runs SIP_REQUEST_SEND or SIP_RESPONSE_SEND on datagram b just
// before it leaves: a client's message for lg's member (chosen, the
// profile's Via and Record-Route inserted), or lg's member's message for
// the client. It returns what to send; false drops it. Without a handler
// of either event it is one bit test.
func (f *flow) sipOut(lg *leg, b []byte) ([]byte, bool) {
	if f.rs == nil || f.snap.EvMask&config.SIPSendBits == 0 {
		return b, true
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		return b, true // not SIP: no SIP event
	}
	ev := config.SIPSendEvent(m.Request, false)
	if !f.handles(ev) {
		return b, true
	}
	return f.sipRule(ev, lg, &m, b)
}

// sipSent runs SIP_REQUEST_DONE or SIP_RESPONSE_DONE once datagram b
// has left (to lg's member or from it to the client); the message can
// no longer change. Without a handler of either event it is one bit
// test.
func (f *flow) sipSent(lg *leg, b []byte) {
	if f.rs == nil || f.snap.EvMask&config.SIPDoneBits == 0 {
		return
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		return
	}
	if ev := config.SIPSendEvent(m.Request, true); f.handles(ev) {
		var st rules.SIPState
		f.runMsg(ev, lg, b, &st)
	}
}

// sipBegin binds datagram b to the SIP:: commands of the event about to
// run and keeps the flow's decisions from before it: a client's message
// in rs.sipKept until sipRuleDone, a member's in rs.sipLegKept until
// sipEnd. Under rs.mu.
func (f *flow) sipBegin(lg *leg, b []byte) {
	rs := f.rs
	switch {
	case lg != nil:
		rs.sipLegKept.target, rs.sipLegKept.persist = rs.Target, rs.persist
	case !rs.sipKeeping:
		rs.sipKept.target, rs.sipKept.persist = rs.Target, rs.persist
		rs.sipKeeping = true
	}
	if prog := irules.Program(f.snap.Cfg.Rules); prog != nil {
		f.RuleSession(prog).BeginSIP(b)
	}
}

// sipEnd is what the event did to its message; a member's message gives
// the flow's decisions back at once. Under rs.mu.
func (f *flow) sipEnd(lg *leg) rules.SIPState {
	rs := f.rs
	var st rules.SIPState
	if rs.sess != nil {
		st = rs.sess.EndSIP()
	}
	if lg != nil {
		rs.Target, rs.persist = rs.sipLegKept.target, rs.sipLegKept.persist
	}
	return st
}

// sipRuleDone gives the flow its decisions from before a client
// message's SIP event back, once the message was sent or dropped: a
// SIP_REQUEST's pool or persist directs that message alone.
func (f *flow) sipRuleDone() {
	rs := f.rs
	f.persists, f.pers = rs.sipKept.persists, rs.sipKept.pers
	rs.mu.Lock()
	if rs.sipKeeping {
		rs.Target, rs.persist = rs.sipKept.target, rs.sipKept.persist
		rs.Changed = false
		rs.sipKeeping = false
	}
	rs.mu.Unlock()
}

// sipPersist readies the flow's sip_info persistence for message m.
func (f *flow) sipPersist(m *sipmsg.Message, sc *config.SIPDatagram) {
	if sc.PersistHeader == "" {
		return
	}
	if f.sipField.IsZero() {
		f.sipField = sipmsg.NewField(sc.PersistHeader)
	}
	v, ok := m.Header(f.sipField)
	if !ok || len(v) == 0 {
		f.persists = false
		return
	}
	prof := f.snap.Cfg.ProfileFor(persist.SIP)
	d := persistDecision{key: persist.StringKey(persist.SIP, string(v)), prof: prof, timeout: config.DefaultPersistTimeout}
	if prof != nil {
		d.timeout = prof.Timeout
	}
	f.persists, f.pers = true, d
	if f.persisted == nil {
		f.persisted = f.persistLookup // a method value: made once
	}
}
