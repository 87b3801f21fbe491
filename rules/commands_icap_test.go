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

// TestICAPHTTPCommands: in ICAP_REQUEST and ICAP_RESPONSE, HTTP::
// commands read and edit the encapsulated HTTP message: the response
// when there is one (RESPMOD, a page), the request otherwise; an edit of
// a message the ICAP server left as it was (read only) fails the
// exchange, as does an action with no client to act on.
func TestICAPHTTPCommands(t *testing.T) {
	head := func(s string, response bool) *HTTPHead {
		h := &HTTPHead{}
		if err := h.Reset([]byte(s), response); err != nil {
			t.Fatal(err)
		}
		return h
	}
	const get = "GET /scan/a.exe?x=1 HTTP/1.1\r\nHost: app\r\nX-A: 1\r\n\r\n"
	const ok = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n"
	cases := []struct {
		name, body string
		ev         Event
		req, resp  string
		readOnly   bool
		log        string
		wantReq    string // the request head after the rule ("" unchanged)
		wantResp   string
		err        string
	}{
		{name: "request read", body: `when ICAP_REQUEST { log local0. "[HTTP::method] [HTTP::path] [HTTP::header X-A] [HTTP::host]" }`, ev: ICAPRequest, req: get, log: "GET /scan/a.exe 1 app"},
		{name: "request edited", body: `when ICAP_REQUEST { HTTP::header insert X-Scanned-By ltm; HTTP::header remove X-A }`, ev: ICAPRequest, req: get,
			wantReq: "GET /scan/a.exe?x=1 HTTP/1.1\r\nHost: app\r\nX-Scanned-By: ltm\r\n\r\n"},
		{name: "response of RESPMOD read", body: `when ICAP_REQUEST { log local0. "[HTTP::status] [HTTP::header Content-Type]" }`, ev: ICAPRequest, req: get, resp: ok, log: "200 text/html"},
		{name: "response of the answer edited", body: `when ICAP_RESPONSE { HTTP::header replace Content-Type text/plain }`, ev: ICAPResponse, resp: ok,
			wantResp: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"},
		{name: "read only after a 204: read", body: `when ICAP_RESPONSE { log local0. [HTTP::uri] }`, ev: ICAPResponse, req: get, readOnly: true, log: "/scan/a.exe?x=1"},
		{name: "read only after a 204: edit fails", body: `when ICAP_RESPONSE { HTTP::header insert X-B 1 }`, ev: ICAPResponse, req: get, readOnly: true, err: "left unchanged"},
		{name: "no message", body: `when ICAP_REQUEST { HTTP::header names }`, ev: ICAPRequest, err: "there is no HTTP request"},
		{name: "no client to answer", body: `when ICAP_REQUEST { HTTP::respond 403 }`, ev: ICAPRequest, req: get, err: "not valid in ICAP_REQUEST or ICAP_RESPONSE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "icap", c.body)
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			m := &ICAPMessage{Method: "REQMOD", URI: "icap://127.93.0.5:1344/av", ReadOnly: c.readOnly}
			if c.req != "" {
				m.HTTPRequest = head(c.req, false)
			}
			if c.resp != "" {
				m.Method, m.HTTPResponse = "RESPMOD", head(c.resp, true)
			}
			err := p.RunICAP(c.ev, m, netip.MustParseAddrPort("127.93.0.5:1344"))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) != 1 || !strings.HasSuffix(logged[0], ">: "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.wantReq != "" && (!m.HTTPRequest.Modified() || string(m.HTTPRequest.AppendTo(nil)) != c.wantReq) {
				t.Fatalf("request %q, want %q", m.HTTPRequest.AppendTo(nil), c.wantReq)
			}
			if c.wantResp != "" && (!m.HTTPResponse.Modified() || string(m.HTTPResponse.AppendTo(nil)) != c.wantResp) {
				t.Fatalf("response %q, want %q", m.HTTPResponse.AppendTo(nil), c.wantResp)
			}
			if c.wantReq == "" && m.HTTPRequest != nil && m.HTTPRequest.Modified() || c.wantResp == "" && m.HTTPResponse != nil && m.HTTPResponse.Modified() {
				t.Fatal("a message the rule did not edit is modified")
			}
		})
	}
}
