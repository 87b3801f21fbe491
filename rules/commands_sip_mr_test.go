package rules

import (
	"strings"
	"sync"
	"testing"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfsip"
)

const sipTestSDPInvite = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK1\r\n" +
	"From: <sip:alice@example.com>;tag=a1\r\n" +
	"To: <sip:bob@example.com>\r\n" +
	"Call-ID: call-1@127.78.0.9\r\n" +
	"CSeq: 1 INVITE\r\n" +
	"Record-Route: <sip:p1.example.com;lr>, <sip:p2.example.com;lr>\r\n" +
	"Record-Route: <sip:p3.example.com;lr>\r\n" +
	"Content-Type: application/sdp\r\n" +
	"Content-Length: 147\r\n\r\n" +
	"v=0\r\no=alice 2890844526 1 IN IP4 127.78.0.9\r\ns=-\r\nc=IN IP4 127.78.0.9\r\nt=0 0\r\n" +
	"m=audio 49170 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\nm=video 0 RTP/AVP 31\r\n"

// TestSIPInMREvents: on a virtual with SIP message routing the SIP::
// and SDP:: commands read and change the message being routed in
// MR_INGRESS, MR_EGRESS and MR_FAILED; an edit changes the routed
// message at once, SIP::discard drops it, SIP::respond answers its
// client; what decides a request before routing runs in MR_INGRESS
// only; another protocol's router refuses them.
func TestSIPInMREvents(t *testing.T) {
	sipCfg := &mrf.Config{Proto: mrfsip.New(&mrfsip.Session{Host: "127.78.0.1:5060"})}
	for _, c := range []struct {
		name, ev, body, msg, set, err string
		generic                       bool
		check                         func(t *testing.T, m *mrf.Message, sent []string)
	}{
		{name: "reads", ev: "MR_INGRESS", body: `set ::r "[SIP::method] [SIP::call_id] <[SIP::response code]> [SIP::record-route top]"`,
			msg: sipTestSDPInvite, set: "INVITE call-1@127.78.0.9 <> <sip:p1.example.com;lr>"},
		{name: "response in MR_EGRESS", ev: "MR_EGRESS", body: `set ::r "[SIP::response code] [SIP::response status] <[SIP::method]>"`, msg: sipTestOK, set: "200 OK <>"},
		{name: "header edit reaches the message", ev: "MR_EGRESS", body: `SIP::header insert X-Seen yes; SIP::header remove Call-ID; set ::r [SIP::header X-Seen]`, msg: sipTestOK, set: "yes",
			check: func(t *testing.T, m *mrf.Message, _ []string) {
				if !strings.Contains(string(m.Data), "X-Seen: yes\r\n") || strings.Contains(string(m.Data), "Call-ID") {
					t.Fatalf("message %q", m.Data)
				}
			}},
		{name: "sdp reads", ev: "MR_INGRESS", body: `set ::r "[SDP::session_id] [SDP::media count] [SDP::media type 1] [SDP::media port 0] [SDP::media conn 0] [SDP::media attr 0 0] [SDP::field c]"`,
			msg: sipTestSDPInvite, set: "2890844526 2 video 49170 IN IP4 127.78.0.9 rtpmap:0 PCMU/8000 IN IP4 127.78.0.9"},
		{name: "sdp rewrite sets the length", ev: "MR_FAILED", body: `SDP::media port 0 40000; SDP::field c 0 "IN IP4 127.78.0.200"; set ::r [SDP::media conn 0]`,
			msg: sipTestSDPInvite, set: "IN IP4 127.78.0.200",
			check: func(t *testing.T, m *mrf.Message, _ []string) {
				body := m.Data[strings.Index(string(m.Data), "\r\n\r\n")+4:]
				if !strings.Contains(string(m.Data), "Content-Length: 149\r\n") || len(body) != 149 || !strings.Contains(string(body), "m=audio 40000 RTP/AVP 0\r\n") {
					t.Fatalf("message %q", m.Data)
				}
			}},
		{name: "discard drops", ev: "MR_INGRESS", body: `SIP::discard; set ::r [SIP::route_status]`, msg: sipTestSDPInvite, set: "dropped",
			check: func(t *testing.T, m *mrf.Message, _ []string) {
				if !m.Drop {
					t.Fatal("not dropped")
				}
			}},
		{name: "respond answers the client", ev: "MR_INGRESS", body: `SIP::respond 480; SIP::discard`, msg: sipTestSDPInvite,
			check: func(t *testing.T, m *mrf.Message, sent []string) {
				if len(sent) != 1 || !strings.HasPrefix(sent[0], "SIP/2.0 480 Temporarily Unavailable\r\n") || !m.Drop {
					t.Fatalf("sent %q drop %v", sent, m.Drop)
				}
			}},
		{name: "route and persist in MR_INGRESS", ev: "MR_INGRESS", body: `SIP::route host 127.78.0.5 5070; SIP::persist k1 30; set ::r [SIP::persist]`, msg: sipTestSDPInvite, set: "k1",
			check: func(t *testing.T, m *mrf.Message, _ []string) {
				if m.RouteHost.String() != "127.78.0.5:5070" || m.Persist != "k1" {
					t.Fatalf("route %v persist %q", m.RouteHost, m.Persist)
				}
			}},
		{name: "route in MR_FAILED", ev: "MR_FAILED", body: `SIP::route peer peer_b; MR::retry`, msg: sipTestSDPInvite,
			check: func(t *testing.T, m *mrf.Message, _ []string) {
				if len(m.RoutePeers) != 1 || m.RoutePeers[0] != "peer_b" || !m.Retry {
					t.Fatalf("peers %v retry %v", m.RoutePeers, m.Retry)
				}
			}},
		{name: "respond in MR_EGRESS", ev: "MR_EGRESS", body: `SIP::respond 200`, msg: sipTestSDPInvite, err: "not valid in MR_EGRESS (valid in SIP_REQUEST and MR_INGRESS)"},
		{name: "persist set in MR_FAILED", ev: "MR_FAILED", body: `SIP::persist k`, msg: sipTestSDPInvite, err: "not valid in MR_FAILED"},
		{name: "generic router", ev: "MR_INGRESS", body: `SIP::method`, msg: sipTestSDPInvite, generic: true, err: "valid in the MR_ events of a virtual with SIP message routing"},
		{name: "sdp on a generic router", ev: "MR_INGRESS", body: `SDP::session_id`, msg: sipTestSDPInvite, generic: true, err: "SDP::session_id: not valid in MR_INGRESS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sipmr", "when "+c.ev+" { "+c.body+" }"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			cfg := sipCfg
			if c.generic {
				cfg = &mrf.Config{}
			}
			r := mrf.NewRouter(cfg, nil, nil)
			var mu sync.Mutex
			var sent []string
			sess := r.NewSession(func(b []byte) error {
				mu.Lock()
				sent = append(sent, string(b))
				mu.Unlock()
				return nil
			}, nil)
			m := sess.Message([]byte(c.msg))
			s.BeginMR(m, r, "virtual /Common/vs")
			ev, _ := ParseEvent(c.ev)
			err := s.Run(ev)
			s.EndMR()
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
				if v, _ := s.in.GetVar("::r"); v.String() != c.set {
					t.Fatalf("got %q, want %q", v.String(), c.set)
				}
			}
			if c.check != nil {
				mu.Lock()
				defer mu.Unlock()
				c.check(t, m, sent)
			}
		})
	}
}

// TestSDPCommands: the SDP:: commands on the sip profile's messages:
// reads, rewrites (the body and its Content-Length), a message without
// a description, and the errors.
func TestSDPCommands(t *testing.T) {
	for _, c := range []struct {
		name, body, msg, set, err string
		ev                        Event
		check                     func(t *testing.T, st *SIPState)
	}{
		{name: "reads", body: `set ::r "[SDP::field v]|[SDP::field o]|[SDP::field m 1]|[SDP::media 0]|[SDP::media]|[SDP::media transport]|<[SDP::media attr 1]>"`, msg: sipTestSDPInvite, ev: SIPRequest,
			set: "0|alice 2890844526 1 IN IP4 127.78.0.9|video 0 RTP/AVP 31|audio 49170 RTP/AVP 0|2|RTP/AVP|<>"},
		{name: "out of range reads empty", body: `set ::r "<[SDP::field b]><[SDP::media 5]><[SDP::media port 5]>"`, msg: sipTestSDPInvite, ev: SIPRequest, set: "<><><>"},
		{name: "no description", body: `set ::r "[SDP::media count]<[SDP::session_id]><[SDP::field v]>"`, msg: sipTestOK, ev: SIPResponse, set: "0<><>"},
		{name: "conn added to a medium", body: `SDP::media conn 1 "IN IP4 127.78.0.7"; set ::r "[SDP::media conn 1]|[SDP::media conn 0]"`, msg: sipTestSDPInvite, ev: SIPRequest,
			set: "IN IP4 127.78.0.7|IN IP4 127.78.0.9",
			check: func(t *testing.T, st *SIPState) {
				if !st.Edited || !strings.Contains(string(st.Msg), "m=video 0 RTP/AVP 31\r\nc=IN IP4 127.78.0.7\r\n") || !strings.Contains(string(st.Msg), "Content-Length: 168\r\n") {
					t.Fatalf("%q", st.Msg)
				}
			}},
		{name: "rewrite in a done event", body: `SDP::media port 0 1`, msg: sipTestSDPInvite, ev: SIPRequestDone, err: "not valid in SIP_REQUEST_DONE"},
		{name: "set a missing field", body: `SDP::field b 0 "AS:64"`, msg: sipTestSDPInvite, ev: SIPRequest, err: "has no b field 0"},
		{name: "bad port", body: `SDP::media port 0 70000`, msg: sipTestSDPInvite, ev: SIPRequest, err: "expected a port"},
		{name: "bad field name", body: `SDP::field cc`, msg: sipTestSDPInvite, ev: SIPRequest, err: "is not an SDP field name"},
		{name: "line break", body: "SDP::field c 0 \"a\\nb\"", msg: sipTestSDPInvite, ev: SIPRequest, err: "may not hold a line break"},
		{name: "bad media word", body: `SDP::media codec`, msg: sipTestSDPInvite, ev: SIPRequest, err: "expected count, an index"},
		{name: "record-route index and top", body: `set ::r "[SIP::record-route 1]|[SIP::record-route top]"`, msg: sipTestSDPInvite, ev: SIPRequest, set: "<sip:p3.example.com;lr>|<sip:p1.example.com;lr>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sdp", "when "+c.ev.String()+" { "+c.body+" }"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.BeginSIP([]byte(c.msg))
			err := s.Run(c.ev)
			st := s.EndSIP()
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
				if v, _ := s.in.GetVar("::r"); v.String() != c.set {
					t.Fatalf("got %q, want %q", v.String(), c.set)
				}
			}
			if c.check != nil {
				c.check(t, &st)
			}
		})
	}
}
