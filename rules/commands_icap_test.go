package rules

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// TestICAPCommands: the ICAP:: commands read and edit the ICAP message
// of ICAP_REQUEST and ICAP_RESPONSE, refuse what cannot go on the wire
// and leave the message as it was then; elsewhere they are errors.
func TestICAPCommands(t *testing.T) {
	req := func() *ICAPMessage {
		return &ICAPMessage{Method: "REQMOD", URI: "icap://127.66.0.5:1344/av", Fields: [][2]string{
			{"Host", "127.66.0.5:1344"}, {"Allow", "204"}, {"X-Dup", "1"}, {"X-Dup", "2"}, {"Encapsulated", "req-hdr=0, null-body=30"}}}
	}
	resp := func() *ICAPMessage {
		return &ICAPMessage{Method: "RESPMOD", URI: "icap://127.66.0.5:1344/av", Status: 204, Fields: [][2]string{{"ISTag", `"t1"`}, {"X-Infection-Found", "none"}}}
	}
	cases := []struct {
		name, body string
		ev         Event
		msg        func() *ICAPMessage
		want       func(*ICAPMessage) // the message after the rule
		log        string             // the value the rule logged
		err        string
	}{
		{name: "method and uri", body: `when ICAP_REQUEST { log local0. "[ICAP::method] [ICAP::uri]" }`, ev: ICAPRequest, msg: req, log: "REQMOD icap://127.66.0.5:1344/av"},
		{name: "names", body: `when ICAP_REQUEST { log local0. [ICAP::header names] }`, ev: ICAPRequest, msg: req, log: "Host Allow X-Dup X-Dup Encapsulated"},
		{name: "count, exists, value (last)", body: `when ICAP_REQUEST { log local0. "[ICAP::header count x-dup] [ICAP::header exists allow] [ICAP::header exists nope] [ICAP::header value X-Dup] [ICAP::header host]" }`, ev: ICAPRequest, msg: req, log: "2 1 0 2 127.66.0.5:1344"},
		{name: "insert", body: `when ICAP_REQUEST { ICAP::header insert X-Client-IP 127.66.0.9 }`, ev: ICAPRequest, msg: req,
			want: func(m *ICAPMessage) { m.Fields = append(m.Fields, [2]string{"X-Client-IP", "127.66.0.9"}) }},
		{name: "replace the last", body: `when ICAP_REQUEST { ICAP::header replace x-dup 3 }`, ev: ICAPRequest, msg: req, want: func(m *ICAPMessage) { m.Fields[3][1] = "3" }},
		{name: "replace absent inserts", body: `when ICAP_REQUEST { ICAP::header replace X-New a }`, ev: ICAPRequest, msg: req,
			want: func(m *ICAPMessage) { m.Fields = append(m.Fields, [2]string{"X-New", "a"}) }},
		{name: "remove every one", body: `when ICAP_REQUEST { ICAP::header remove x-dup }`, ev: ICAPRequest, msg: req,
			want: func(m *ICAPMessage) { m.Fields = append(m.Fields[:2], m.Fields[4]) }},
		{name: "uri set", body: `when ICAP_REQUEST { ICAP::uri icap://127.66.0.5:1344/strict }`, ev: ICAPRequest, msg: req, want: func(m *ICAPMessage) { m.URI = "icap://127.66.0.5:1344/strict" }},
		{name: "status in ICAP_RESPONSE", body: `when ICAP_RESPONSE { log local0. "[ICAP::status] [ICAP::method] [ICAP::header value x-infection-found]" }`, ev: ICAPResponse, msg: resp, log: "204 RESPMOD none"},
		{name: "response edited", body: `when ICAP_RESPONSE { ICAP::header remove istag }`, ev: ICAPResponse, msg: resp, want: func(m *ICAPMessage) { m.Fields = m.Fields[1:] }},
		{name: "status in ICAP_REQUEST", body: `when ICAP_REQUEST { ICAP::status }`, ev: ICAPRequest, msg: req, err: "valid in ICAP_RESPONSE"},
		{name: "uri set in ICAP_RESPONSE", body: `when ICAP_RESPONSE { ICAP::uri icap://x/y }`, ev: ICAPResponse, msg: resp, err: "ICAP_REQUEST only"},
		{name: "uri with a space", body: `when ICAP_REQUEST { ICAP::uri "icap://x/a b" }`, ev: ICAPRequest, msg: req, err: "is not a URI"},
		{name: "bad field name", body: `when ICAP_REQUEST { ICAP::header insert "X Bad" 1 }`, ev: ICAPRequest, msg: req, err: "is not a header field name"},
		{name: "value with a line break", body: "when ICAP_REQUEST { ICAP::header insert X-A \"1\\r\\nX-B: 2\" }", ev: ICAPRequest, msg: req, err: "line break"},
		{name: "framing field", body: `when ICAP_REQUEST { ICAP::header remove encapsulated }`, ev: ICAPRequest, msg: req, err: "set from the encapsulated message"},
		{name: "wrong args", body: `when ICAP_REQUEST { ICAP::header insert X-A }`, ev: ICAPRequest, msg: req, err: "wrong # args"},
		{name: "outside the ICAP events", body: `when HTTP_REQUEST { ICAP::method }`, ev: HTTPRequest, err: "valid in ICAP_REQUEST, ICAP_RESPONSE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "icap", c.body)
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			var m, want *ICAPMessage
			if c.msg != nil {
				m, want = c.msg(), c.msg()
				if c.want != nil {
					c.want(want)
				}
			}
			var err error
			if m != nil {
				err = p.RunICAP(c.ev, m, netip.MustParseAddrPort("127.66.0.5:1344"))
			} else {
				s := p.NewConnState(newFakeConn())
				err = s.Run(c.ev)
				s.Release()
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if m != nil && !reflect.DeepEqual(m, c.msg()) {
					t.Fatalf("message changed by a failed rule: %+v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, want) {
				t.Fatalf("message %+v, want %+v", m, want)
			}
			if c.log != "" && (len(logged) != 1 || !strings.HasSuffix(logged[0], ">: "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
		})
	}
}
