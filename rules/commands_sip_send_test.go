package rules

import (
	"errors"
	"strings"
	"testing"
)

// TestSIPSendEventsAndPersist: the send events may still edit or discard
// the message, the done events only read it, SIP::persist reads the
// message's key (the rule's, else the profile's field, Call-ID by
// default) and sets or resets it in SIP_REQUEST through the connection's
// persistence.
func TestSIPSendEventsAndPersist(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		msg        string
		field      string // SetSIPPersistField, when not ""
		set        string // the rule's `set ::r ...`
		calls      string // the persistence calls made
		err        string
		check      func(t *testing.T, st *SIPState)
	}{
		{name: "request send edits", body: `when SIP_REQUEST_SEND { SIP::header insert X-Member [LB::server addr]; set ::r [SIP::method] }`, ev: SIPRequestSend, msg: sipTestInvite, set: "INVITE",
			check: func(t *testing.T, st *SIPState) {
				if !st.Edited || !strings.Contains(string(st.Msg), "X-Member: 127.0.0.34\r\n") {
					t.Fatalf("edited %v %q", st.Edited, st.Msg)
				}
			}},
		{name: "request send discards", body: `when SIP_REQUEST_SEND { SIP::discard }`, ev: SIPRequestSend, msg: sipTestInvite,
			check: func(t *testing.T, st *SIPState) {
				if !st.Discard {
					t.Fatal("not discarded")
				}
			}},
		{name: "response send reads the code", body: `when SIP_RESPONSE_SEND { set ::r [SIP::response code]; SIP::header remove CSeq }`, ev: SIPResponseSend, msg: sipTestOK, set: "200",
			check: func(t *testing.T, st *SIPState) {
				if strings.Contains(string(st.Msg), "CSeq") {
					t.Fatalf("CSeq left: %q", st.Msg)
				}
			}},
		{name: "request done reads", body: `when SIP_REQUEST_DONE { set ::r "[SIP::method] [SIP::call_id]" }`, ev: SIPRequestDone, msg: sipTestInvite, set: "INVITE call-1@127.78.0.9"},
		{name: "response done reads", body: `when SIP_RESPONSE_DONE { set ::r [SIP::response status] }`, ev: SIPResponseDone, msg: sipTestOK, set: "OK"},
		{name: "request done may not edit", body: `when SIP_REQUEST_DONE { SIP::header insert X-A b }`, ev: SIPRequestDone, msg: sipTestInvite, err: "not valid in SIP_REQUEST_DONE"},
		{name: "response done may not discard", body: `when SIP_RESPONSE_DONE { SIP::discard }`, ev: SIPResponseDone, msg: sipTestOK, err: "not valid in SIP_RESPONSE_DONE"},
		{name: "respond only in SIP_REQUEST", body: `when SIP_REQUEST_SEND { SIP::respond 403 }`, ev: SIPRequestSend, msg: sipTestInvite, err: "not valid in SIP_REQUEST_SEND"},
		{name: "response code not in a request send", body: `when SIP_REQUEST_SEND { SIP::response code }`, ev: SIPRequestSend, msg: sipTestInvite, err: "not valid in SIP_REQUEST_SEND"},
		{name: "persist reads Call-ID", body: `when SIP_REQUEST { set ::r [SIP::persist] }`, ev: SIPRequest, msg: sipTestInvite, set: "call-1@127.78.0.9"},
		{name: "persist reads the profile's field", body: `when SIP_REQUEST { set ::r [SIP::persist] }`, ev: SIPRequest, msg: sipTestInvite, field: "X-Route", set: "old"},
		{name: "persist reads in a done event", body: `when SIP_RESPONSE_DONE { set ::r [SIP::persist] }`, ev: SIPResponseDone, msg: sipTestOK, set: "call-1@127.78.0.9"},
		{name: "persist sets a key", body: `when SIP_REQUEST { SIP::persist alice; set ::r [SIP::persist] }`, ev: SIPRequest, msg: sipTestInvite, set: "alice", calls: `persist m6 "alice"`,
			check: func(t *testing.T, st *SIPState) {
				if !st.PersistSet || st.PersistKey != "alice" {
					t.Fatalf("persist %v %q", st.PersistSet, st.PersistKey)
				}
			}},
		{name: "persist sets a key and timeout", body: `when SIP_REQUEST { SIP::persist alice 90 }`, ev: SIPRequest, msg: sipTestInvite, calls: `persist m6 "alice" 1m30s`},
		{name: "persist reset deletes the message's record", body: `when SIP_REQUEST { SIP::persist reset }`, ev: SIPRequest, msg: sipTestInvite, calls: `delete m6 "call-1@127.78.0.9"`},
		{name: "persist reset of the rule's key", body: `when SIP_REQUEST { SIP::persist k1; SIP::persist reset }`, ev: SIPRequest, msg: sipTestInvite, calls: `persist m6 "k1"; delete m6 "k1"`},
		{name: "persist bad timeout", body: `when SIP_REQUEST { SIP::persist alice soon }`, ev: SIPRequest, msg: sipTestInvite, err: "bad persist timeout"},
		{name: "persist empty key", body: `when SIP_REQUEST { SIP::persist "" }`, ev: SIPRequest, msg: sipTestInvite, err: "may not be empty"},
		{name: "persist too many args", body: `when SIP_REQUEST { SIP::persist a 1 2 }`, ev: SIPRequest, msg: sipTestInvite, err: "wrong # args"},
		{name: "persist set after balancing", body: `when SIP_REQUEST_SEND { SIP::persist alice }`, ev: SIPRequestSend, msg: sipTestInvite, err: "not valid in SIP_REQUEST_SEND"},
		{name: "persist set in a response", body: `when SIP_RESPONSE { SIP::persist reset }`, ev: SIPResponse, msg: sipTestOK, err: "not valid in SIP_RESPONSE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sip", c.body))
			fc := &persistFake{fakeConn: newFakeConn(), recs: map[string]PersistTarget{}}
			s := p.NewConnState(fc)
			defer s.Release()
			s.SetSIP()
			if c.field != "" {
				s.SetSIPPersistField(c.field)
			}
			s.BeginSIP([]byte(c.msg))
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.set != "" {
				v, _ := s.in.GetVar("::r")
				if v.String() != c.set {
					t.Fatalf("got %q, want %q", v.String(), c.set)
				}
			}
			if got := fc.String(); got != c.calls {
				t.Fatalf("persistence calls %q, want %q", got, c.calls)
			}
			st := s.EndSIP()
			if c.check != nil {
				c.check(t, &st)
			}
			if after := s.EndSIP(); after.Msg != nil || after.PersistSet {
				t.Fatalf("the message outlived its event: %+v", after)
			}
		})
	}
}

// TestSIPSendEventSides: the send and done events of a request run on
// the server side (the member is known), those of a response on the
// client side, where the response goes.
func TestSIPSendEventSides(t *testing.T) {
	for ev, want := range map[Event]Side{SIPRequestSend: ServerSide, SIPRequestDone: ServerSide, SIPResponseSend: ClientSide, SIPResponseDone: ClientSide} {
		if got := ev.Side(); got != want {
			t.Errorf("%s runs on side %v, want %v", ev, got, want)
		}
		if e, ok := ParseEvent(ev.String()); !ok || e != ev {
			t.Errorf("%s does not parse back", ev)
		}
	}
}

// TestSIPResponseReleaseIsNotAnEvent: BIG-IP's SIP events have no
// SIP_RESPONSE_RELEASE (SIP_RESPONSE_SEND is that place), so a rule
// naming it is refused, not kept.
func TestSIPResponseReleaseIsNotAnEvent(t *testing.T) {
	_, err := Compile("r", "when SIP_RESPONSE_RELEASE { log local0. x }")
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v, want a *CompileError", err)
	}
}
