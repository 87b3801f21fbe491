package rules

import (
	"strings"
	"testing"
)

const sipTestInvite = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK1\r\n" +
	"v: SIP/2.0/TCP 127.78.0.8:5060;branch=z9hG4bK0\r\n" +
	"f: <sip:alice@example.com>;tag=a1\r\n" +
	"To: <sip:bob@example.com>\r\n" +
	"i: call-1@127.78.0.9\r\n" +
	"CSeq: 1 INVITE\r\n" +
	"X-Route: old\r\n" +
	"l: 4\r\n\r\nv=0\n"

const sipTestOK = "SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK1\r\nCall-ID: call-1@127.78.0.9\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n"

func TestSIPCommands(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		msg        string
		noProfile  bool
		set        string // the rule's `set r ...` result
		err        string
		check      func(t *testing.T, st *SIPState)
	}{
		{name: "method and uri", body: `when SIP_REQUEST { set ::r "[SIP::method] [SIP::uri]" }`, ev: SIPRequest, msg: sipTestInvite, set: "INVITE sip:bob@example.com"},
		{name: "call-id from compact form", body: `when SIP_REQUEST { set ::r [SIP::call_id] }`, ev: SIPRequest, msg: sipTestInvite, set: "call-1@127.78.0.9"},
		{name: "from and to", body: `when SIP_REQUEST { set ::r "[SIP::from]|[SIP::to]" }`, ev: SIPRequest, msg: sipTestInvite, set: "<sip:alice@example.com>;tag=a1|<sip:bob@example.com>"},
		{name: "via top and second", body: `when SIP_REQUEST { set ::r "[SIP::via]|[SIP::via 1]|[SIP::via 2]" }`, ev: SIPRequest, msg: sipTestInvite, set: "SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK1|SIP/2.0/TCP 127.78.0.8:5060;branch=z9hG4bK0|"},
		{name: "header by name", body: `when SIP_REQUEST { set ::r [SIP::header CSeq] }`, ev: SIPRequest, msg: sipTestInvite, set: "1 INVITE"},
		{name: "payload", body: `when SIP_REQUEST { set ::r [SIP::payload 3] }`, ev: SIPRequest, msg: sipTestInvite, set: "v=0"},
		{name: "response code and status", body: `when SIP_RESPONSE { set ::r "[SIP::response code] [SIP::response status]" }`, ev: SIPResponse, msg: sipTestOK, set: "200 OK"},
		{name: "method of a response is empty", body: `when SIP_RESPONSE { set ::r "<[SIP::method]>" }`, ev: SIPResponse, msg: sipTestOK, set: "<>"},
		{name: "header replace and insert", body: `when SIP_REQUEST { SIP::header replace X-Route new; SIP::header insert X-LB openltm; set ::r [SIP::header X-Route] }`, ev: SIPRequest, msg: sipTestInvite, set: "new",
			check: func(t *testing.T, st *SIPState) {
				if !st.Edited || !strings.Contains(string(st.Msg), "X-Route: new\r\n") || !strings.Contains(string(st.Msg), "X-LB: openltm\r\n\r\nv=0\n") {
					t.Fatalf("edited %v %q", st.Edited, st.Msg)
				}
			}},
		{name: "header remove", body: `when SIP_REQUEST { SIP::header remove x-route }`, ev: SIPRequest, msg: sipTestInvite,
			check: func(t *testing.T, st *SIPState) {
				if strings.Contains(string(st.Msg), "X-Route") {
					t.Fatalf("X-Route left: %q", st.Msg)
				}
			}},
		{name: "discard", body: `when SIP_REQUEST { SIP::discard }`, ev: SIPRequest, msg: sipTestInvite,
			check: func(t *testing.T, st *SIPState) {
				if !st.Discard {
					t.Fatal("not discarded")
				}
			}},
		{name: "respond", body: `when SIP_REQUEST { SIP::respond 486 "Busy Here" Retry-After 30 }`, ev: SIPRequest, msg: sipTestInvite,
			check: func(t *testing.T, st *SIPState) {
				want := "SIP/2.0 486 Busy Here\r\nVia: SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK1\r\nVia: SIP/2.0/TCP 127.78.0.8:5060;branch=z9hG4bK0\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:bob@example.com>\r\nCall-ID: call-1@127.78.0.9\r\nCSeq: 1 INVITE\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n"
				if string(st.Reply) != want {
					t.Fatalf("reply\n%q\nwant\n%q", st.Reply, want)
				}
			}},
		{name: "respond default reason", body: `when SIP_REQUEST { SIP::respond 503 }`, ev: SIPRequest, msg: sipTestInvite,
			check: func(t *testing.T, st *SIPState) {
				if !strings.HasPrefix(string(st.Reply), "SIP/2.0 503 Service Unavailable\r\n") {
					t.Fatalf("reply %q", st.Reply)
				}
			}},
		{name: "respond in a response", body: `when SIP_RESPONSE { SIP::respond 200 }`, ev: SIPResponse, msg: sipTestOK, err: "not valid in SIP_RESPONSE"},
		{name: "respond code out of range", body: `when SIP_REQUEST { SIP::respond 99 }`, ev: SIPRequest, msg: sipTestInvite, err: "status code from 100 to 699"},
		{name: "response code in a request", body: `when SIP_REQUEST { SIP::response code }`, ev: SIPRequest, msg: sipTestInvite, err: "not valid in SIP_REQUEST"},
		{name: "header value with a line break", body: "when SIP_REQUEST { SIP::header insert X-A \"a\\r\\nb\" }", ev: SIPRequest, msg: sipTestInvite, err: "may not hold a line break"},
		{name: "header name with a colon", body: `when SIP_REQUEST { SIP::header replace X:A b }`, ev: SIPRequest, msg: sipTestInvite, err: "is not a header field name"},
		{name: "wrong args", body: `when SIP_REQUEST { SIP::method now }`, ev: SIPRequest, msg: sipTestInvite, err: "wrong # args"},
		{name: "without the profile", body: `when SIP_REQUEST { SIP::method }`, ev: SIPRequest, msg: sipTestInvite, noProfile: true, err: "no sip profile"},
		{name: "outside the SIP events", body: `when CLIENT_ACCEPTED { SIP::method }`, ev: ClientAccepted, msg: sipTestInvite, err: "not valid in CLIENT_ACCEPTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sip", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noProfile {
				s.SetSIP()
				s.SIP().Reset([]byte(c.msg))
			}
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
			if c.check != nil {
				c.check(t, s.SIP())
			}
		})
	}
}

// TestBeginEndSIP: each message a host binds is the one its event sees,
// what the event did comes back from EndSIP, and nothing of one message
// (an edit, a discard, a reply, the message itself) is left for the
// next.
func TestBeginEndSIP(t *testing.T) {
	p := NewProgram(&Env{}, mustCompile(t, "sip", `when SIP_REQUEST {
  set ::r [SIP::method]
  switch [SIP::header X-Do] {
    edit { SIP::header insert X-Done yes }
    discard { SIP::discard }
    respond { SIP::respond 403 }
  }
}`))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	req := func(meth string) string {
		return strings.Replace(sipTestInvite, "INVITE sip:", meth+" sip:", 1)
	}
	for _, c := range []struct {
		meth, do                  string
		edited, discard, hasReply bool
	}{
		{"INVITE", "edit", true, false, false},
		{"OPTIONS", "", false, false, false},
		{"BYE", "discard", false, true, false},
		{"INFO", "respond", false, false, true},
		{"MESSAGE", "", false, false, false},
	} {
		msg := req(c.meth)
		if c.do != "" {
			msg = strings.Replace(msg, "X-Route: old\r\n", "X-Do: "+c.do+"\r\n", 1)
		}
		s.BeginSIP([]byte(msg))
		if err := s.Run(SIPRequest); err != nil {
			t.Fatalf("%s: %v", c.meth, err)
		}
		st := s.EndSIP()
		if v, _ := s.in.GetVar("::r"); v.String() != c.meth {
			t.Fatalf("%s: the event saw %q", c.meth, v.String())
		}
		if st.Edited != c.edited || st.Discard != c.discard || (st.Reply != nil) != c.hasReply {
			t.Fatalf("%s: edited %v discard %v reply %q", c.meth, st.Edited, st.Discard, st.Reply)
		}
		if c.edited && !strings.Contains(string(st.Msg), "X-Done: yes\r\n") {
			t.Fatalf("%s: edit lost: %q", c.meth, st.Msg)
		}
		if left := s.SIP(); left.Msg != nil || left.Edited || left.Discard || left.Reply != nil {
			t.Fatalf("%s: the state kept %+v after EndSIP", c.meth, left)
		}
	}
}
