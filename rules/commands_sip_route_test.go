package rules

import (
	"net/netip"
	"strings"
	"testing"
)

// sipTestRR is a request that crossed two proxies which record-routed.
const sipTestRR = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/UDP 127.95.0.9:5060;branch=z9hG4bK7\r\n" +
	"Record-Route: <sip:127.95.0.21;lr>\r\n" +
	"Record-Route: <sip:127.95.0.22;lr>\r\n" +
	"Call-ID: rr-1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n"

// TestSIPRouteAndMessage: SIP::record-route reads the Record-Route
// fields, SIP::message reads and replaces the whole message (its
// Content-Length made to match), SIP::route directs the request to a
// pool (peer) or an address (host) through the connection's decisions,
// and SIP::route_status tells where in its routing the message is.
func TestSIPRouteAndMessage(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		msg        string
		set        string // the rule's `set ::r ...`
		decided    string // the connection's decisions
		err        string
		check      func(t *testing.T, st *SIPState)
	}{
		{name: "record-route top and second", body: `when SIP_REQUEST { set ::r "[SIP::record-route]|[SIP::record-route 1]|[SIP::record-route 2]" }`, ev: SIPRequest, msg: sipTestRR, set: "<sip:127.95.0.21;lr>|<sip:127.95.0.22;lr>|"},
		{name: "record-route absent", body: `when SIP_RESPONSE { set ::r "<[SIP::record-route]>" }`, ev: SIPResponse, msg: sipTestOK, set: "<>"},
		{name: "record-route bad index", body: `when SIP_REQUEST { SIP::record-route first }`, ev: SIPRequest, msg: sipTestRR, err: "expected an index"},
		{name: "message reads the whole message", body: `when SIP_RESPONSE { set ::r [SIP::message] }`, ev: SIPResponse, msg: sipTestOK, set: sipTestOK},
		{name: "message replaced, length fixed", body: `when SIP_REQUEST { SIP::message "OPTIONS sip:x@example.com SIP/2.0\r\nCall-ID: n1\r\nContent-Length: 99\r\n\r\nhello" }`, ev: SIPRequest, msg: sipTestRR,
			check: func(t *testing.T, st *SIPState) {
				want := "OPTIONS sip:x@example.com SIP/2.0\r\nCall-ID: n1\r\nContent-Length: 5\r\n\r\nhello"
				if !st.Edited || string(st.Msg) != want {
					t.Fatalf("edited %v %q, want %q", st.Edited, st.Msg, want)
				}
			}},
		{name: "message replaced, length added", body: `when SIP_RESPONSE_SEND { SIP::message "SIP/2.0 200 OK\r\nCall-ID: n1\r\n\r\nab" }`, ev: SIPResponseSend, msg: sipTestOK,
			check: func(t *testing.T, st *SIPState) {
				if !strings.HasSuffix(string(st.Msg), "Content-Length: 2\r\n\r\nab") {
					t.Fatalf("message %q", st.Msg)
				}
			}},
		{name: "message replaced as given", body: `when SIP_REQUEST { SIP::message "BYE sip:x SIP/2.0\r\nContent-Length: 0\r\n\r\n"; set ::r [SIP::method] }`, ev: SIPRequest, msg: sipTestRR, set: "BYE"},
		{name: "message not SIP", body: `when SIP_REQUEST { SIP::message "hello" }`, ev: SIPRequest, msg: sipTestRR, err: "not a SIP message",
			check: func(t *testing.T, st *SIPState) {}},
		{name: "message replace in a done event", body: `when SIP_REQUEST_DONE { SIP::message "BYE sip:x SIP/2.0\r\n\r\n" }`, ev: SIPRequestDone, msg: sipTestRR, err: "not valid in SIP_REQUEST_DONE"},
		{name: "message too many args", body: `when SIP_REQUEST { SIP::message a b }`, ev: SIPRequest, msg: sipTestRR, err: "wrong # args"},
		{name: "route peer", body: `when SIP_REQUEST { SIP::route peer /Common/sip_b }`, ev: SIPRequest, msg: sipTestRR, decided: "pool /Common/sip_b"},
		{name: "route host addr:port", body: `when SIP_REQUEST { SIP::route host 127.95.0.30:5070 }`, ev: SIPRequest, msg: sipTestRR, decided: "node 127.95.0.30:5070"},
		{name: "route host addr port", body: `when SIP_REQUEST { SIP::route host 127.95.0.30 5071 }`, ev: SIPRequest, msg: sipTestRR, decided: "node 127.95.0.30:5071"},
		{name: "route virtual of its own and host", body: `when SIP_REQUEST { SIP::route virtual vs_http host 127.95.0.30:5070 }`, ev: SIPRequest, msg: sipTestRR, decided: "node 127.95.0.30:5070"},
		{name: "route another virtual", body: `when SIP_REQUEST { SIP::route virtual /Common/other host 127.95.0.30:5070 }`, ev: SIPRequest, msg: sipTestRR, err: "over the virtual server it arrived on"},
		{name: "route transport", body: `when SIP_REQUEST { SIP::route transport tc host 127.95.0.30:5070 }`, ev: SIPRequest, msg: sipTestRR, err: "no transport configurations"},
		{name: "route host and peer", body: `when SIP_REQUEST { SIP::route host 127.95.0.30:5070 peer p }`, ev: SIPRequest, msg: sipTestRR, err: "wrong # args"},
		{name: "route bad address", body: `when SIP_REQUEST { SIP::route host example }`, ev: SIPRequest, msg: sipTestRR, err: "bad address"},
		{name: "route nothing", body: `when SIP_REQUEST { SIP::route virtual vs_http }`, ev: SIPRequest, msg: sipTestRR, err: "wrong # args"},
		{name: "route after balancing", body: `when SIP_REQUEST_SEND { SIP::route peer p }`, ev: SIPRequestSend, msg: sipTestRR, err: "not valid in SIP_REQUEST_SEND"},
		{name: "route a response", body: `when SIP_RESPONSE { SIP::route peer p }`, ev: SIPResponse, msg: sipTestOK, err: "not valid in SIP_RESPONSE"},
		{name: "route unknown pool", body: `when SIP_REQUEST { SIP::route peer nosuch }`, ev: SIPRequest, msg: sipTestRR, err: "no such pool"},
		{name: "route_status before routing", body: `when SIP_REQUEST { set ::r [SIP::route_status] }`, ev: SIPRequest, msg: sipTestRR, set: "unprocessed"},
		{name: "route_status once sent", body: `when SIP_REQUEST_SEND { set ::r [SIP::route_status] }`, ev: SIPRequestSend, msg: sipTestRR, set: "route found"},
		{name: "route_status of a response sent", body: `when SIP_RESPONSE_DONE { set ::r [SIP::route_status] }`, ev: SIPResponseDone, msg: sipTestOK, set: "route found"},
		{name: "route_status discarded", body: `when SIP_REQUEST { SIP::discard; set ::r [SIP::route_status] }`, ev: SIPRequest, msg: sipTestRR, set: "dropped"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sip", c.body))
			fc := newFakeConn()
			fc.failPool = "nosuch"
			s := p.NewConnState(infoFake{fc})
			defer s.Release()
			s.SetSIP()
			s.BeginSIP([]byte(c.msg))
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				if st := s.EndSIP(); st.Edited || len(fc.decided) != 0 {
					t.Fatalf("a refused command changed something: edited %v, decided %+v", st.Edited, fc.decided)
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
			if got := fc.String(); got != c.decided {
				t.Fatalf("decisions %q, want %q", got, c.decided)
			}
			st := s.EndSIP()
			if c.check != nil {
				c.check(t, &st)
			}
		})
	}
}

// infoFake is a fake connection that names its virtual server.
type infoFake struct{ *fakeConn }

func (infoFake) VirtualName() string { return "/Common/vs_http" }
func (infoFake) LBMode(string) (string, error) {
	return "round-robin", nil
}
func (infoFake) Members(string) ([]netip.AddrPort, error) { return nil, nil }
func (infoFake) MemberInfo(string, netip.AddrPort) (MemberInfo, error) {
	return MemberInfo{}, nil
}

// TestSIPRoutePeerIsARef: the pool a literal SIP::route peer names is a
// reference the configuration checks, as `pool`'s is.
func TestSIPRoutePeerIsARef(t *testing.T) {
	r := mustCompile(t, "r", `when SIP_REQUEST { SIP::route peer sip_b; SIP::route host 127.95.0.30:5070 }`)
	if got := r.Refs(); len(got) != 1 || got[0].Kind != "pool" || got[0].Name != "sip_b" {
		t.Fatalf("refs %+v, want the pool sip_b", got)
	}
}
