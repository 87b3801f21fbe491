package rules

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
)

// httpFake is a connection on an HTTP virtual: it holds the current
// request and response heads and records actions.
type httpFake struct {
	*persistFake
	req, resp *HTTPHead
	num       int
	actions   []HTTPAction
}

func (f *httpFake) HTTPRequest() *HTTPHead  { return f.req }
func (f *httpFake) HTTPResponse() *HTTPHead { return f.resp }
func (f *httpFake) HTTPRequestNum() int     { return f.num }
func (f *httpFake) HTTPDo(a HTTPAction) error {
	f.actions = append(f.actions, a)
	switch a.Kind {
	case HTTPRespond:
		f.record("respond %d keep=%v %q", a.Status, a.KeepAlive, a.Data)
	case HTTPCollect:
		f.record("collect %d response=%v", a.Length, a.Response)
	case HTTPFallback, OneConnectLabel:
		f.record("%s %s", a.Kind, a.Text)
	case OneConnectDetach, OneConnectReuse, HTTPDisable:
		f.record("%s %v", a.Kind, a.Enable)
	case HTTPRetry:
		f.record("%s %q", a.Kind, a.Data)
	default:
		f.record("%s", a.Kind)
	}
	return nil
}

const testRequest = "GET /app/v1/items.json?id=42&lang=en HTTP/1.1\r\n" +
	"Host: www.example.com:8080\r\n" +
	"User-Agent: curl/8.0\r\n" +
	"Accept: */*\r\n" +
	"X-Forwarded-For: 10.1.2.3\r\n" +
	"Cookie: JSESSIONID=abc123; theme=dark\r\n" +
	"x-forwarded-for: 10.9.9.9\r\n" +
	"Cookie: lang=fr\r\n" +
	"Authorization: Basic YWxpY2U6czNjcjN0\r\n" +
	"\r\n"

const testResponse = "HTTP/1.1 302 Found\r\n" +
	"Location: http://www.example.com/login\r\n" +
	"Set-Cookie: sid=xyz; Path=/; HttpOnly\r\n" +
	"Set-Cookie: pref=1; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\n" +
	"Content-Length: 0\r\n" +
	"\r\n"

func newHTTPFake(t testing.TB, req, resp string) *httpFake {
	t.Helper()
	f := &httpFake{persistFake: &persistFake{fakeConn: newFakeConn(), recs: map[string]PersistTarget{}}, num: 1}
	if req != "" {
		f.req = &HTTPHead{}
		if err := f.req.Reset([]byte(req), false); err != nil {
			t.Fatalf("request: %v", err)
		}
	}
	if resp != "" {
		f.resp = &HTTPHead{}
		if err := f.resp.Reset([]byte(resp), true); err != nil {
			t.Fatalf("response: %v", err)
		}
	}
	return f
}

func TestHTTPReads(t *testing.T) {
	cases := []struct {
		ev         Event
		expr, want string
	}{
		{HTTPRequest, "HTTP::host", "www.example.com:8080"},
		{HTTPRequest, "HTTP::method", "GET"},
		{HTTPRequest, "HTTP::uri", "/app/v1/items.json?id=42&lang=en"},
		{HTTPRequest, "HTTP::path", "/app/v1/items.json"},
		{HTTPRequest, "HTTP::query", "id=42&lang=en"},
		{HTTPRequest, "HTTP::version", "1.1"},
		{HTTPRequest, "HTTP::header User-Agent", "curl/8.0"},
		{HTTPRequest, "HTTP::header value user-agent", "curl/8.0"},
		{HTTPRequest, "HTTP::header X-Forwarded-For", "10.9.9.9"},
		{HTTPRequest, "HTTP::header values X-Forwarded-For", "10.1.2.3 10.9.9.9"},
		{HTTPRequest, "HTTP::header names", "Host User-Agent Accept X-Forwarded-For Cookie x-forwarded-for Cookie Authorization"},
		{HTTPRequest, "HTTP::header count", "8"},
		{HTTPRequest, "HTTP::header count cookie", "2"},
		{HTTPRequest, "HTTP::header at 1", "User-Agent"},
		{HTTPRequest, "HTTP::header at 99", ""},
		{HTTPRequest, "HTTP::header exists ACCEPT", "1"},
		{HTTPRequest, "HTTP::header exists Referer", "0"},
		{HTTPRequest, "HTTP::header Referer", ""},
		{HTTPRequest, "HTTP::header is_keepalive", "1"},
		{HTTPRequest, "HTTP::is_keepalive", "1"},
		{HTTPRequest, "HTTP::request_num", "1"},
		{HTTPRequest, "HTTP::has_responded", "0"},
		{HTTPRequest, "HTTP::username", "alice"},
		{HTTPRequest, "HTTP::password", "s3cr3t"},
		{HTTPRequest, "HTTP::cookie names", "JSESSIONID theme lang"},
		{HTTPRequest, "HTTP::cookie count", "3"},
		{HTTPRequest, "HTTP::cookie JSESSIONID", "abc123"},
		{HTTPRequest, "HTTP::cookie value lang", "fr"},
		{HTTPRequest, "HTTP::cookie exists theme", "1"},
		{HTTPRequest, "HTTP::cookie exists nope", "0"},
		{HTTPRequest, "HTTP::cookie version theme", "0"},
		{HTTPRequest, "URI::query [HTTP::uri] id", "42"},
		{HTTPRequest, "string tolower [HTTP::header value Host]", "www.example.com:8080"},
		{HTTPRequest, "getfield [HTTP::host] : 1", "www.example.com"},
		{HTTPRequest, "HTTP::uri -normalized", "/app/v1/items.json?id=42&lang=en"},
		{HTTPRequest, "string length [HTTP::request]", fmt.Sprint(len(testRequest))},
		{HTTPResponse, "HTTP::status", "302"},
		{HTTPResponse, "HTTP::is_redirect", "1"},
		{HTTPResponse, "HTTP::header Location", "http://www.example.com/login"},
		{HTTPResponse, "HTTP::uri", "/app/v1/items.json?id=42&lang=en"},
		{HTTPResponse, "HTTP::host", "www.example.com:8080"},
		{HTTPResponse, "HTTP::method", "GET"},
		{HTTPResponse, "HTTP::version", "1.1"},
		{HTTPResponse, "HTTP::cookie names", "sid pref"},
		{HTTPResponse, "HTTP::cookie value sid", "xyz"},
		{HTTPResponse, "HTTP::cookie path sid", "/"},
		{HTTPResponse, "HTTP::cookie httponly sid", "enable"},
		{HTTPResponse, "HTTP::cookie secure sid", "disable"},
		{HTTPResponse, "HTTP::cookie domain pref", "example.com"},
		{HTTPResponse, "HTTP::cookie expires pref", "Wed, 21 Oct 2026 07:28:00 GMT"},
		{HTTPResponse, "HTTP::cookie version sid", "0"},
		{HTTPResponse, "HTTP::header count", "4"},
		{HTTPResponse, "HTTP::cookie attribute sid names", "Path HttpOnly"},
		{HTTPResponse, "HTTP::cookie attribute pref value domain", "example.com"},
		{HTTPResponse, "HTTP::cookie attribute sid exists httponly", "1"},
		{HTTPResponseRelease, "HTTP::cookie attribute sid exists SameSite", "0"},
		{HTTPRequestSend, "HTTP::header Accept", "*/*"},
		{LBSelected, "HTTP::path", "/app/v1/items.json"},
	}
	for _, c := range cases {
		t.Run(c.ev.String()+" "+c.expr, func(t *testing.T) {
			f := newHTTPFake(t, testRequest, testResponse)
			got, err := evalIn(t, f, nil, c.ev, c.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
		})
	}
}

func TestHTTPEdits(t *testing.T) {
	cases := []struct {
		name   string
		ev     Event
		script string
		want   string // the head after the event
	}{
		{"replace last and insert", HTTPRequest, "HTTP::header replace X-Forwarded-For [IP::client_addr]; HTTP::header insert X-Test 1 X-Other two",
			"GET /app/v1/items.json?id=42&lang=en HTTP/1.1\r\nHost: www.example.com:8080\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\nX-Forwarded-For: 10.1.2.3\r\nCookie: JSESSIONID=abc123; theme=dark\r\nx-forwarded-for: 127.0.0.9\r\nCookie: lang=fr\r\nAuthorization: Basic YWxpY2U6czNjcjN0\r\nX-Test: 1\r\nX-Other: two\r\n\r\n"},
		{"remove all, replace absent inserts", HTTPRequest, "HTTP::header remove x-forwarded-for; HTTP::header remove Authorization; HTTP::header replace Via 1.1; HTTP::header insert [list A 1 B 2]",
			"GET /app/v1/items.json?id=42&lang=en HTTP/1.1\r\nHost: www.example.com:8080\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\nCookie: JSESSIONID=abc123; theme=dark\r\nCookie: lang=fr\r\nVia: 1.1\r\nA: 1\r\nB: 2\r\n\r\n"},
		{"uri path query version", HTTPRequest, "HTTP::path /new/items.json; HTTP::query a=b; HTTP::version 1.0; HTTP::header sanitize Host Accept",
			"GET /new/items.json?a=b HTTP/1.0\r\nHost: www.example.com:8080\r\nAccept: */*\r\n\r\n"},
		{"uri", HTTPRequest, "HTTP::uri [string map {/app/ /} [HTTP::uri]]; HTTP::query {}; HTTP::header sanitize",
			"GET /v1/items.json HTTP/1.1\r\n\r\n"},
		{"cookies in a request", HTTPRequest, "HTTP::cookie remove theme; HTTP::cookie value lang de; HTTP::cookie insert name added value 1; HTTP::header sanitize Cookie",
			"GET /app/v1/items.json?id=42&lang=en HTTP/1.1\r\nCookie: JSESSIONID=abc123\r\nCookie: lang=de; added=1\r\n\r\n"},
		{"remove the only cookie drops the field", HTTPRequest, "HTTP::cookie remove lang; HTTP::header sanitize Cookie",
			"GET /app/v1/items.json?id=42&lang=en HTTP/1.1\r\nCookie: JSESSIONID=abc123; theme=dark\r\n\r\n"},
		{"response cookies", HTTPResponse, "HTTP::cookie secure sid enable; HTTP::cookie httponly sid disable; HTTP::cookie path sid /app; HTTP::cookie remove pref; HTTP::cookie insert name n value v path / domain example.com version 1; HTTP::header remove Location",
			"HTTP/1.1 302 Found\r\nSet-Cookie: sid=xyz; Path=/app; Secure\r\nContent-Length: 0\r\nSet-Cookie: n=v; path=/; domain=example.com; Version=1\r\n\r\n"},
		{"response header", HTTPResponse, "HTTP::header insert Strict-Transport-Security {max-age=31536000}; HTTP::header replace Location https://www.example.com/login; HTTP::header remove Set-Cookie",
			"HTTP/1.1 302 Found\r\nLocation: https://www.example.com/login\r\nContent-Length: 0\r\nStrict-Transport-Security: max-age=31536000\r\n\r\n"},
		{"cookie attribute", HTTPResponseRelease, "foreach c [HTTP::cookie names] { HTTP::cookie attribute $c remove samesite; HTTP::cookie attribute $c insert SameSite None; HTTP::cookie secure $c enable }; HTTP::cookie attribute pref insert Partitioned; HTTP::header sanitize Set-Cookie",
			"HTTP/1.1 302 Found\r\nSet-Cookie: sid=xyz; Path=/; HttpOnly; SameSite=None; Secure\r\nSet-Cookie: pref=1; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT; SameSite=None; Secure; Partitioned\r\nContent-Length: 0\r\n\r\n"},
		{"cookie expires", HTTPResponse, "HTTP::cookie expires sid 0 absolute; HTTP::header sanitize Set-Cookie",
			"HTTP/1.1 302 Found\r\nSet-Cookie: sid=xyz; Path=/; HttpOnly; Expires=Thu, 01 Jan 1970 00:00:00 GMT\r\nSet-Cookie: pref=1; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\nContent-Length: 0\r\n\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newHTTPFake(t, testRequest, testResponse)
			if _, err := evalIn(t, f, nil, c.ev, c.script); err != nil {
				t.Fatal(err)
			}
			h := f.req
			if c.ev.Side() == ServerSide {
				h = f.resp
			}
			if !h.Modified() {
				t.Error("not Modified")
			}
			if got := h.String(); got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	// An unedited head is written back byte for byte.
	f := newHTTPFake(t, testRequest, "")
	if _, err := evalIn(t, f, nil, HTTPRequest, "HTTP::header value Host"); err != nil {
		t.Fatal(err)
	}
	if f.req.Modified() || f.req.String() != testRequest {
		t.Errorf("unedited head changed: %q", f.req.String())
	}
}

func TestHTTPActions(t *testing.T) {
	cases := []struct {
		name, script, want string
	}{
		{"respond", `HTTP::respond 200 content "hello" Content-Type text/plain`,
			`respond 200 keep=true "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 5\r\n\r\nhello"`},
		{"respond noserver, version auto, header list, close", `HTTP::respond 503 -version auto content {down} noserver [list Retry-After 30 Connection close]`,
			`respond 503 keep=false "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\nConnection: close\r\nContent-Length: 4\r\n\r\ndown"`},
		{"redirect", `HTTP::redirect https://[getfield [HTTP::host] : 1][HTTP::uri]`,
			`respond 302 keep=true "HTTP/1.0 302 Found\r\nLocation: https://www.example.com/app/v1/items.json?id=42&lang=en\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"`},
		{"has_responded", `HTTP::respond 403; if {[HTTP::has_responded]} { HTTP::close }`,
			`respond 403 keep=true "HTTP/1.0 403 Forbidden\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"; HTTP::close`},
		{"content-length replaced, 401 gets an authenticate header", `HTTP::respond 401 content "no" Content-Length 99`,
			`respond 401 keep=true "HTTP/1.0 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"\"\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nno"`},
		{"401 with the rule's realm", `HTTP::respond 401 WWW-Authenticate "Basic realm=\"Secured Area\""`,
			`respond 401 keep=true "HTTP/1.0 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"Secured Area\"\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"`},
		{"collect and release", `HTTP::collect 100; HTTP::collect; HTTP::release`, "collect 100 response=false; collect -1 response=false; HTTP::release"},
		{"disable enable", `HTTP::disable; HTTP::disable discard; HTTP::enable`, "HTTP::disable false; HTTP::disable true; HTTP::enable"},
		{"fallback retry", `HTTP::fallback http://sorry.example.com/; HTTP::retry [HTTP::request]`, `HTTP::fallback http://sorry.example.com/; HTTP::retry "` + strings.ReplaceAll(strings.ReplaceAll(testRequest, "\r", `\r`), "\n", `\n`) + `"`},
		{"oneconnect", `ONECONNECT::detach disable; ONECONNECT::reuse enable; ONECONNECT::label update tenant1`, "ONECONNECT::detach false; ONECONNECT::reuse true; ONECONNECT::label tenant1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newHTTPFake(t, testRequest, "")
			if _, err := evalIn(t, f, nil, HTTPRequest, c.script); err != nil {
				t.Fatal(err)
			}
			if got := f.String(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name string
		conn Conn
		ev   Event
		expr string
		want string
	}{
		{"no http profile", newFakeConn(), HTTPRequest, "HTTP::uri", "has no http profile"},
		{"modssl", nil, HTTPRequest, "HTTP::header insert_modssl_fields", "insert_modssl_fields: not supported"},
		{"respond twice", nil, HTTPRequest, "HTTP::respond 200; HTTP::redirect /x", "Multiple redirect/respond invocations not supported"},
		{"header injection", nil, HTTPRequest, "HTTP::header insert X-A \"a\\r\\nEvil: 1\"", "holds a line break"},
		{"bad name", nil, HTTPRequest, "HTTP::header replace {bad name} 1", "bad header name"},
		{"no response yet", nil, HTTPRequest, "HTTP::status", "no HTTP response"},
		{"bad status", nil, HTTPRequest, "HTTP::respond 42", "bad status"},
		{"attr in request", nil, HTTPRequest, "HTTP::cookie path JSESSIONID", "only in responses"},
		{"bad version", nil, HTTPRequest, "HTTP::version 2.0", "must be 1.0 or 1.1"},
		{"no request in CLIENT_ACCEPTED", &httpFake{persistFake: &persistFake{fakeConn: newFakeConn()}}, ClientAccepted, "HTTP::host", "no HTTP request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := c.conn
			if conn == nil {
				conn = newHTTPFake(t, testRequest, "")
			}
			_, err := evalIn(t, conn, nil, c.ev, c.expr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

// Rules written the way published HTTP rules are, run against a request.
func TestHTTPRules(t *testing.T) {
	dg, err := NewDataGroup("/Common/host_pools", DGString, []Record{{Key: "api.example.com", Value: "api_pool"}, {Key: "www.example.com", Value: "web_pool"}})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{DataGroup: func(n string) (*DataGroup, bool) { return dg, strings.HasSuffix(n, "host_pools") }}
	cases := []struct {
		name   string
		rule   string
		events []Event
		want   string
	}{
		{"host and uri routing", `when HTTP_REQUEST {
  switch -glob [string tolower [HTTP::host]] {
    "api.*" { pool api_pool }
    "www.example.com*" {
      if { [HTTP::uri] starts_with "/app/" }{
        HTTP::header replace X-Forwarded-For [IP::client_addr]
        pool app_pool
      } else {
        pool web_pool
      }
    }
    default { HTTP::respond 404 content "unknown host" }
  }
}`, []Event{HTTPRequest}, "pool app_pool"},
		{"class lookup on host", `when HTTP_REQUEST {
  set host [string tolower [getfield [HTTP::host] ":" 1]]
  if { [class match $host equals host_pools] } {
    pool [class match -value $host equals host_pools]
  } else {
    reject
  }
}`, []Event{HTTPRequest}, "pool web_pool"},
		{"persist on XFF", `when HTTP_REQUEST {
  if { [HTTP::header exists "X-Forwarded-For"] } {
    persist uie [lindex [split [HTTP::header value X-Forwarded-For] ","] 0] 1800
  } else {
    persist source_addr
  }
}`, []Event{HTTPRequest}, `persist m2 "10.9.9.9" 30m0s`},
		{"https redirect", `when HTTP_REQUEST {
  HTTP::redirect "https://[HTTP::host][HTTP::uri]"
  event disable all
}`, []Event{HTTPRequest, HTTPRequest}, `respond 302 keep=true "HTTP/1.0 302 Found\r\nLocation: https://www.example.com:8080/app/v1/items.json?id=42&lang=en\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"`},
		{"maintenance page when the pool is empty", `when HTTP_REQUEST {
  if { [active_members test_pool] < 3 } {
    HTTP::respond 503 content "<html><body>Back soon</body></html>" "Content-Type" "text/html" "Retry-After" "60"
    return
  }
  pool test_pool
}`, []Event{HTTPRequest}, `respond 503 keep=true "HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/html\r\nRetry-After: 60\r\nServer: BigIP\r\nConnection: Keep-Alive\r\nContent-Length: 35\r\n\r\n<html><body>Back soon</body></html>"`},
		{"session cookie to pool member", `when HTTP_REQUEST {
  set sid [HTTP::cookie value JSESSIONID]
  if { $sid ne "" } {
    set h [crc32 $sid]
    set members [active_members -list test_pool]
    set m [lindex $members [expr {$h % [llength $members]}]]
    pool test_pool member [lindex $m 0] [lindex $m 1]
  }
}`, []Event{HTTPRequest}, "member test_pool 127.0.0.34:9000"},
		{"collect a body", `when HTTP_REQUEST {
  if { [HTTP::method] eq "POST" && [HTTP::header exists Content-Length] } { HTTP::collect [HTTP::header Content-Length] }
  ONECONNECT::detach enable
}`, []Event{HTTPRequest}, "ONECONNECT::detach true"},
		{"lb_failed fallback", `when LB_FAILED { if { ![HTTP::has_responded] } { HTTP::fallback "http://sorry.example.com/" } }`, []Event{LBFailed}, "HTTP::fallback http://sorry.example.com/"},
		{"md5 of a header", `when HTTP_REQUEST { log local0. "ua [binary encode hex [md5 [HTTP::header User-Agent]]]"; pool p[expr {[crc32 [HTTP::host]] % 2}] }`, []Event{HTTPRequest}, "pool p0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(env, mustCompile(t, "/Common/r", c.rule))
			f := newHTTPFake(t, testRequest, "")
			s := p.NewConnState(f)
			defer s.Release()
			for _, ev := range c.events {
				if err := s.Run(ev); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.String(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// stateConn is how the dataplane is meant to wire HTTP: its Conn embeds
// an HTTPState.
type stateConn struct {
	*fakeConn
	HTTPState
}

func TestHTTPStateTwoRequests(t *testing.T) {
	p := NewProgram(nil, mustCompile(t, "/Common/r", `when HTTP_REQUEST {
  if { [HTTP::request_num] == 2 } { HTTP::respond 200 content "second" } else { HTTP::header insert X-Seen [HTTP::request_num] }
}
when HTTP_RESPONSE { HTTP::header remove Set-Cookie; if {[HTTP::has_responded]} { log local0. odd } }`))
	c := &stateConn{fakeConn: newFakeConn()}
	s := p.NewConnState(c)
	defer s.Release()
	req := []byte(testRequest)
	rh, err := httpx.ParseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := []byte(testResponse)
	sh, err := httpx.ParseResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	// Request 1 goes to a server and gets a response.
	c.StartRequest(req, &rh)
	if err := s.Run(HTTPRequest); err != nil {
		t.Fatal(err)
	}
	if len(c.Actions) != 0 || !strings.HasSuffix(c.Request.String(), "X-Seen: 1\r\n\r\n") {
		t.Fatalf("request 1: actions %v head %q", c.Actions, c.Request.String())
	}
	c.StartResponse(resp, &sh)
	if err := s.Run(HTTPResponse); err != nil {
		t.Fatal(err)
	}
	if got := c.Response.HeaderCount("set-cookie"); got != 0 {
		t.Errorf("response 1 keeps %d Set-Cookie", got)
	}
	// Request 2 on the same connection is answered by the rule.
	c.StartRequest(req, &rh)
	if c.HTTPResponse() != nil {
		t.Error("response 1 is still current")
	}
	if err := s.Run(HTTPRequest); err != nil {
		t.Fatal(err)
	}
	if len(c.Actions) != 1 || c.Actions[0].Kind != HTTPRespond || !strings.HasSuffix(string(c.Actions[0].Data), "\r\n\r\nsecond") {
		t.Fatalf("request 2 actions %+v", c.Actions)
	}
	if c.Request.Modified() {
		t.Error("request 2 head was edited")
	}
	c.ClearActions()
	// Request 3: a new request may be answered again.
	c.StartRequest(req, &rh)
	if err := s.Run(HTTPRequest); err != nil || len(c.Actions) != 0 {
		t.Fatalf("request 3: %v %+v", err, c.Actions)
	}
}

func TestHTTPRespondClosesForClose(t *testing.T) {
	for _, req := range []string{
		"GET / HTTP/1.0\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	} {
		f := newHTTPFake(t, req, "")
		if _, err := evalIn(t, f, nil, HTTPRequest, "HTTP::respond 200 -version auto content ok"); err != nil {
			t.Fatal(err)
		}
		a := f.actions[0]
		if a.KeepAlive || !strings.Contains(string(a.Data), "Connection: close\r\n") {
			t.Errorf("%q: keep %v, response %q", req, a.KeepAlive, a.Data)
		}
	}
	// An HTTP/1.0 client asking for keep-alive keeps its connection.
	f := newHTTPFake(t, "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", "")
	if _, err := evalIn(t, f, nil, HTTPRequest, "HTTP::redirect /x"); err != nil {
		t.Fatal(err)
	}
	if !f.actions[0].KeepAlive {
		t.Errorf("keep-alive 1.0 client closed: %q", f.actions[0].Data)
	}
}

func TestHTTPPayload(t *testing.T) {
	f := newHTTPFake(t, testRequest, testResponse)
	f.payload[ClientSide] = []byte("user=alice&pass=x")
	f.payload[ServerSide] = []byte("<html>http://a/</html>")
	got, err := evalIn(t, f, nil, HTTPRequestData, "list [HTTP::payload length] [HTTP::payload 4] [HTTP::payload 5 5] [URI::query ?[HTTP::payload] user]")
	if err != nil {
		t.Fatal(err)
	}
	if got != "17 user alice alice" {
		t.Errorf("request payload: %q", got)
	}
	if _, err := evalIn(t, f, nil, HTTPResponseData, "HTTP::payload replace 6 7 https://; HTTP::release"); err != nil {
		t.Fatal(err)
	}
	if string(f.payload[ServerSide]) != "<html>https://a/</html>" || !strings.HasSuffix(f.String(), "HTTP::release") {
		t.Errorf("response payload %q, calls %s", f.payload[ServerSide], f)
	}
}

// TestHTTPFramingKept: edits that leave the start line and the framing
// and connection fields alone keep the head's facts (the dataplane then
// does not parse the edited head again); the others do not, and where
// they are kept, a parse of the edited head finds the same facts.
func TestHTTPFramingKept(t *testing.T) {
	const post = "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabc"
	cases := []struct {
		name, req, script string
		kept              bool
	}{
		{"no edit", testRequest, "HTTP::header value Host", true},
		{"replace a header", testRequest, "HTTP::header replace X-Tag [HTTP::path]", true},
		{"insert and remove", testRequest, "HTTP::header insert X-A 1; HTTP::header remove Authorization", true},
		{"cookies", testRequest, "HTTP::cookie remove theme; HTTP::cookie insert name n value v", true},
		{"sanitize keeping all framing", post, "HTTP::header sanitize Host", true},
		{"tab in a value", testRequest, "HTTP::header insert X-A \"a\\tb\"", true},
		{"path", testRequest, "HTTP::path /x", false},
		{"uri", testRequest, "HTTP::uri /x", false},
		{"version", testRequest, "HTTP::version 1.0", false},
		{"content-length", post, "HTTP::header replace Content-Length 2", false},
		{"remove content-length", post, "HTTP::header remove content-length", false},
		{"transfer-encoding", post, "HTTP::header insert Transfer-Encoding chunked", false},
		{"connection", post, "HTTP::header replace Connection close", false},
		{"upgrade", testRequest, "HTTP::header insert Upgrade websocket", false},
		{"expect", post, "HTTP::header insert Expect 100-continue", false},
		{"control character", testRequest, "HTTP::header insert X-A \"a\\x01b\"", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newHTTPFake(t, c.req, "")
			if _, err := evalIn(t, f, nil, HTTPRequest, c.script); err != nil {
				t.Fatal(err)
			}
			if got := f.req.FramingKept(); got != c.kept {
				t.Fatalf("FramingKept %v, want %v (head %q)", got, c.kept, f.req.String())
			}
			if c.kept {
				checkFactsKept(t, f.req)
			}
		})
	}
	// A reset forgets the edits of the message before.
	f := newHTTPFake(t, post, "")
	if _, err := evalIn(t, f, nil, HTTPRequest, "HTTP::header remove Content-Length"); err != nil {
		t.Fatal(err)
	}
	if err := f.req.Reset([]byte(post), false); err != nil || !f.req.FramingKept() {
		t.Fatalf("after Reset: FramingKept %v, err %v", f.req.FramingKept(), err)
	}
}

// checkFactsKept fails t unless h's head, as written, parses to the facts
// h held when it arrived, but for the block's length and field count.
func checkFactsKept(t testing.TB, h *HTTPHead) {
	t.Helper()
	out := h.AppendTo(nil)
	var got httpx.Head
	var err error
	if h.IsResponse() {
		got, err = httpx.ParseResponse(out)
	} else {
		got, err = httpx.ParseRequest(out)
	}
	if err != nil {
		t.Fatalf("head kept its framing but does not parse: %v\n%q", err, out)
	}
	want := *h.Head()
	if string(got.Method) != string(want.Method) {
		t.Fatalf("method %q, arrived %q", got.Method, want.Method)
	}
	got.Method, want.Method = nil, nil
	got.HeaderEnd, want.HeaderEnd = 0, 0
	got.Fields, want.Fields = 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("facts %+v, arrived %+v\n%q", got, want, out)
	}
}
