package mrfsip

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// recordRoutes are the Record-Route values of a message, top first.
func recordRoutes(t *testing.T, b []byte) []string {
	t.Helper()
	m, err := sipmsg.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	m.EachValue(sipmsg.NewField("Record-Route"), func(v []byte) bool {
		out = append(out, string(v))
		return true
	})
	return out
}

// TestRecordRouteMode: double record-routing gives a request that opens
// a dialog two values, the peer side's first, only where it crosses
// sides (transport or address); an in-dialog request gets none, and a
// request that stays on the virtual's side one.
func TestRecordRouteMode(t *testing.T) {
	invite := req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false)
	bye := req("BYE", "alice", "z9hG4bK-2", "c1", 70, true)
	tcpSame := &mrf.Link{Local: netip.MustParseAddrPort("127.175.1.1:41000")}
	tcpOther := &mrf.Link{Local: netip.MustParseAddrPort("127.175.1.7:41000")}
	udpSame := &mrf.Link{UDP: true, Local: netip.MustParseAddrPort("127.175.1.1:42000")}
	for _, tc := range []struct {
		name   string
		s      Session
		link   *mrf.Link
		in     []byte
		wantRR []string
	}{
		{"single across transports", Session{RecordRoute: true}, udpSame, invite,
			[]string{"<sip:127.175.1.1:5060;transport=tcp;lr>"}},
		{"double across transports", Session{RecordRoute: true, DoubleRR: true}, udpSame, invite,
			[]string{"<sip:127.175.1.1:5060;lr>", "<sip:127.175.1.1:5060;transport=tcp;lr>"}},
		{"double from another address", Session{RecordRoute: true, DoubleRR: true}, tcpOther, invite,
			[]string{"<sip:127.175.1.7:5060;transport=tcp;lr>", "<sip:127.175.1.1:5060;transport=tcp;lr>"}},
		{"double on the same side", Session{RecordRoute: true, DoubleRR: true}, tcpSame, invite,
			[]string{"<sip:127.175.1.1:5060;transport=tcp;lr>"}},
		{"double with no link", Session{RecordRoute: true, DoubleRR: true}, nil, invite,
			[]string{"<sip:127.175.1.1:5060;transport=tcp;lr>"}},
		{"double in a dialog", Session{RecordRoute: true, DoubleRR: true}, udpSame, bye, nil},
		{"double without insertion", Session{DoubleRR: true}, udpSame, invite, nil},
		{"service port", Session{RecordRoute: true, DoubleRR: true, Host: "127.175.1.1:5070"}, tcpOther, invite,
			[]string{"<sip:127.175.1.7:5070;transport=tcp;lr>", "<sip:127.175.1.1:5070;transport=tcp;lr>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := tc.s
			if sess.Host == "" {
				sess.Host = "127.175.1.1:5060"
			}
			s := New(&sess)
			var bufs [2][]byte
			out, _ := s.OutboundOn(tc.link, &bufs, &mrf.Message{Data: tc.in}, 5)
			got := recordRoutes(t, out)
			if strings.Join(got, "|") != strings.Join(tc.wantRR, "|") {
				t.Fatalf("Record-Route %q, want %q", got, tc.wantRR)
			}
		})
	}
}

// TestServicePortVia: the virtual's Via names the service port (the
// daemon's Host), a UDP peer flow's Via its own address.
func TestServicePortVia(t *testing.T) {
	s := New(&Session{InsertVia: true, Host: "127.175.1.1:5070"})
	in := req("INVITE", "alice", "z9hG4bK-1", "c1", 70, false)
	var bufs [2][]byte
	out, _ := s.OutboundOn(&mrf.Link{}, &bufs, &mrf.Message{Data: in}, 5)
	m, _ := sipmsg.Parse(out)
	if v := string(m.TopVia()); !strings.HasPrefix(v, "SIP/2.0/TCP 127.175.1.1:5070;branch=") {
		t.Fatalf("TCP Via %q", v)
	}
	out, _ = s.OutboundOn(&mrf.Link{UDP: true, Local: netip.MustParseAddrPort("127.175.1.1:42000")}, &bufs, &mrf.Message{Data: in}, 6)
	m, _ = sipmsg.Parse(out)
	if v := string(m.TopVia()); !strings.HasPrefix(v, "SIP/2.0/UDP 127.175.1.1:42000;rport;branch=") {
		t.Fatalf("UDP Via %q", v)
	}
	// A Route value naming the service port names the virtual.
	if !s.names([]byte("sip:127.175.1.1:5070;lr")) || s.names([]byte("sip:127.175.1.1:5060;lr")) {
		t.Fatal("the virtual's own Route value is not told by the service port")
	}
}

// TestUnknownMethods: with allow-unknown-methods disabled a client's
// request of a method SIP does not define is answered 405 with Allow,
// a known one (and a peer's request) goes on; enabled, everything goes
// on.
func TestUnknownMethods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		allow    bool
		method   string
		fromPeer bool
		want     string // the answer's status line, "" none
	}{
		{"unknown refused", false, "FROB", false, "SIP/2.0 405 Method Not Allowed"},
		{"lower case is another method", false, "invite", false, "SIP/2.0 405 Method Not Allowed"},
		{"known goes on", false, "MESSAGE", false, ""},
		{"extension method goes on", false, "PUBLISH", false, ""},
		{"peer's request goes on", false, "FROB", true, ""},
		{"allowed", true, "FROB", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&Session{Host: "127.175.1.1:5060", AllowUnknown: tc.allow})
			out, handled, _ := s.Local(nil, req(tc.method, "alice", "z9hG4bK-1", "c1", 70, false), tc.fromPeer)
			if tc.want == "" {
				if handled {
					t.Fatalf("answered %q", out)
				}
				return
			}
			if !handled || !strings.HasPrefix(string(out), tc.want+"\r\n") {
				t.Fatalf("answer %q (handled %t), want %q", out, handled, tc.want)
			}
			m, err := sipmsg.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if a, _ := m.Header(sipmsg.NewField("Allow")); !strings.Contains(string(a), "INVITE") {
				t.Fatalf("Allow %q", a)
			}
			if cid, _ := m.Header(sipmsg.CallID); string(cid) != "c1" {
				t.Fatalf("Call-ID %q", cid)
			}
		})
	}
}
