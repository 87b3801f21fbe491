package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// h2Fake is an HTTP/2 client's request: its stream, the connection's
// counts, and what HTTP2::disconnect and HTTP2::disable did.
type h2Fake struct {
	*httpFake
	active       bool
	id           uint32
	weight       uint8
	open, opened int
	disconnected bool
	h2           *bool // SetHTTP2's, nil: no http2 profile
}

func (f *h2Fake) HTTP2Active() bool { return f.active }
func (f *h2Fake) HTTP2Stream() (uint32, uint8, bool) {
	return f.id, f.weight, f.active
}
func (f *h2Fake) SetHTTP2Priority(w uint8) bool {
	f.weight = w
	return f.active
}
func (f *h2Fake) HTTP2Concurrency() int { return f.open }
func (f *h2Fake) HTTP2Requests() int    { return f.opened }
func (f *h2Fake) HTTP2Disconnect() bool {
	f.disconnected = f.active
	return f.active
}
func (f *h2Fake) HTTP2Scheme() string { return "https" }
func (f *h2Fake) SetHTTP2(on bool) error {
	if f.h2 == nil {
		return errors.New("the virtual server has no http2 profile")
	}
	*f.h2 = on
	return nil
}

func newH2Fake(t *testing.T, active bool) *h2Fake {
	on := true
	f := &h2Fake{httpFake: newHTTPFake(t, testRequest, testResponse), active: active, h2: &on}
	if active {
		f.id, f.weight, f.open, f.opened = 5, 15, 2, 3
	}
	return f
}

func TestHTTP2Commands(t *testing.T) {
	cases := []struct {
		name   string
		active bool // the client speaks HTTP/2
		ev     Event
		expr   string
		want   string // the result, or "error: ..." a part of the error
		check  func(f *h2Fake) string
	}{
		{"active", true, HTTPRequest, "HTTP2::active", "1", nil},
		{"not active", false, HTTPRequest, "HTTP2::active", "0", nil},
		{"version", true, HTTPRequest, "HTTP2::version", "2", nil},
		{"version h1", false, HTTPRequest, "HTTP2::version", "0", nil},
		{"stream", true, HTTPRequest, "HTTP2::stream", "5", nil},
		{"stream id", true, HTTPResponse, "HTTP2::stream id", "5", nil},
		{"stream h1", false, HTTPRequest, "HTTP2::stream", "0", nil},
		{"priority", true, HTTPRequest, "HTTP2::stream priority", "15", nil},
		{"priority set", true, HTTPRequest, "list [HTTP2::stream priority 200] [HTTP2::stream priority]", "0 200", nil},
		{"priority too big", true, HTTPRequest, "HTTP2::stream priority 256", "error: expected 0 to 255", nil},
		{"priority not a number", true, HTTPRequest, "HTTP2::stream priority high", "error: bad priority", nil},
		{"priority h1", false, HTTPRequest, "HTTP2::stream priority 3", "error: no HTTP/2 stream", nil},
		{"stream bad", true, HTTPRequest, "HTTP2::stream weight", "error: wrong # args", nil},
		{"concurrency", true, HTTPRequest, "HTTP2::concurrency", "2", nil},
		{"requests", true, HTTPRequest, "HTTP2::requests", "3", nil},
		{"requests h1", false, HTTPRequest, "HTTP2::requests", "0", nil},
		{":method", true, HTTPRequest, "HTTP2::header :method", "GET", nil},
		{":path", true, HTTPRequest, "HTTP2::header :path", "/app/v1/items.json?id=42&lang=en", nil},
		{":authority", true, HTTPRequest, "HTTP2::header :authority", "www.example.com:8080", nil},
		{":scheme", true, HTTPRequest, "HTTP2::header :scheme", "https", nil},
		{":status", true, HTTPResponse, "HTTP2::header :status", "302", nil},
		{"unknown pseudo", true, HTTPRequest, "HTTP2::header :protocol", "", nil},
		{"pseudo h1", false, HTTPRequest, "HTTP2::header :method", "", nil},
		{"replace :path", true, HTTPRequest, "HTTP2::header replace :path /new?x=1; HTTP::uri", "/new?x=1", nil},
		{"replace :authority", true, HTTPRequest, "HTTP2::header replace :authority b.example; HTTP::host", "b.example", nil},
		{"replace :path h1", false, HTTPRequest, "HTTP2::header replace :path /new; HTTP::path", "/app/v1/items.json", nil},
		{"replace bad :path", true, HTTPRequest, "HTTP2::header replace :path new", "error: expected an absolute path", nil},
		{"replace :method", true, HTTPRequest, "HTTP2::header replace :method PUT", "error: :method cannot be changed", nil},
		{"remove", true, HTTPRequest, "HTTP2::header remove :authority", "error: cannot be removed", nil},
		{"header bad", true, HTTPRequest, "HTTP2::header remove :path x", "error: wrong # args", nil},
		{"disconnect", true, HTTPRequest, "HTTP2::disconnect", "", func(f *h2Fake) string {
			if !f.disconnected {
				return "not disconnected"
			}
			return ""
		}},
		{"disconnect h1", false, HTTPRequest, "HTTP2::disconnect", "error: does not speak HTTP/2", nil},
		{"disable", false, ClientAccepted, "HTTP2::disable", "", func(f *h2Fake) string {
			if *f.h2 {
				return "HTTP/2 still on"
			}
			return ""
		}},
		{"disable enable", false, ClientAccepted, "HTTP2::disable; HTTP2::enable", "", func(f *h2Fake) string {
			if !*f.h2 {
				return "HTTP/2 off"
			}
			return ""
		}},
		{"disable in HTTP_REQUEST", true, HTTPRequest, "HTTP2::disable", "error: only valid in CLIENT_ACCEPTED", nil},
		{"disable args", false, ClientAccepted, "HTTP2::disable now", "error: wrong # args", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newH2Fake(t, c.active)
			got, err := evalIn(t, f, nil, c.ev, c.expr)
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
			if c.check != nil {
				if msg := c.check(f); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// TestHTTP2NoProfile: on an HTTP virtual without the http2 profile the
// HTTP2:: readers answer as for an HTTP/1 client, and HTTP2::disable is
// refused; without an http profile they are errors.
func TestHTTP2NoProfile(t *testing.T) {
	f := newHTTPFake(t, testRequest, "")
	for expr, want := range map[string]string{"HTTP2::active": "0", "HTTP2::stream": "0", "HTTP2::version": "0", "HTTP2::concurrency": "0"} {
		if got, err := evalIn(t, f, nil, HTTPRequest, expr); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", expr, got, err, want)
		}
	}
	if _, err := evalIn(t, f, nil, ClientAccepted, "HTTP2::disable"); err == nil || !strings.Contains(err.Error(), "http2 profile") {
		t.Errorf("HTTP2::disable without the profile: %v", err)
	}
	nf := &h2Fake{httpFake: newHTTPFake(t, testRequest, "")}
	if _, err := evalIn(t, nf, nil, ClientAccepted, "HTTP2::disable"); err == nil || !strings.Contains(err.Error(), "no http2 profile") {
		t.Errorf("HTTP2::disable, the profile missing: %v", err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, HTTPRequest, "HTTP2::active"); err == nil || !strings.Contains(err.Error(), "no http profile") {
		t.Errorf("HTTP2::active without http: %v", err)
	}
}

// TestHTTP2SwitchMarked: a rule with HTTP2::disable is told apart, so
// that only its virtual's TLS offers are made switchable.
func TestHTTP2SwitchMarked(t *testing.T) {
	for src, want := range map[string]bool{
		"when CLIENT_ACCEPTED { HTTP2::disable }":           true,
		"when CLIENT_ACCEPTED { if {1} { HTTP2::enable } }": true,
		"when HTTP_REQUEST { HTTP2::stream }":               false,
	} {
		r, err := Compile("r", src)
		if err != nil {
			t.Fatal(err)
		}
		if got := NewProgram(nil, r).SwitchesHTTP2(); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}

// pushFake is an HTTP/2 client that records HTTP2::push's pushes.
type pushFake struct {
	*h2Fake
	pushes []*HTTP2Push
	allow  bool // the client allows pushes
}

func (f *pushFake) HTTP2Push(p *HTTP2Push) bool {
	if !f.allow {
		return false
	}
	f.pushes = append(f.pushes, p)
	return true
}

// TestHTTP2Push: HTTP2::push's forms: the URI, the request's fields
// (separate words or one list; host is the :authority, else the
// request's Host), -priority, -content or -ifile with the response's
// fields (Server: BigIP unless -noserver), and its errors; an HTTP/1
// client, or one that disabled push, gets nothing pushed and no error.
func TestHTTP2Push(t *testing.T) {
	cases := []struct {
		name   string
		active bool
		allow  bool
		ev     Event
		expr   string
		want   string // the pushes as "path authority fields pri local content resp", or "error: ..."
	}{
		{"plain", true, true, HTTPRequest, "HTTP2::push /a.css", "/a.css www.example.com:8080 [] -1 false  []"},
		{"two", true, true, HTTPRequest, "HTTP2::push /a.css; HTTP2::push /b.js accept */*", "/a.css www.example.com:8080 [] -1 false  [] | /b.js www.example.com:8080 [[accept */*]] -1 false  []"},
		{"fields", true, true, HTTPRequest, "HTTP2::push /a.css Accept-Encoding gzip host static.example", "/a.css static.example [[accept-encoding gzip]] -1 false  []"},
		{"fields as a list", true, true, HTTPRequest, "HTTP2::push /a.css [list accept text/css x-a 1]", "/a.css www.example.com:8080 [[accept text/css] [x-a 1]] -1 false  []"},
		{"priority", true, true, HTTPResponse, "HTTP2::push /a.css -priority 7", "/a.css www.example.com:8080 [] 7 false  []"},
		{"content", true, true, HTTPRequest, "HTTP2::push /x.js -content {var x=1} accept */* -- content-type text/javascript", "/x.js www.example.com:8080 [[accept */*]] -1 true var x=1 [[content-type text/javascript] [server BigIP]]"},
		{"content noserver", true, true, HTTPRequest, "HTTP2::push /x.js -content hi -noserver", "/x.js www.example.com:8080 [] -1 true hi []"},
		{"ifile", true, true, HTTPRequest, "HTTP2::push /app.js -ifile app.js -nohost -- {content-type text/javascript}", "/app.js www.example.com:8080 [] -1 true let a; [[content-type text/javascript] [server BigIP]]"},
		{"not allowed", true, false, HTTPRequest, "HTTP2::push /a.css", ""},
		{"h1", false, true, HTTPRequest, "HTTP2::push /a.css", ""},
		{"h1 still checked", false, true, HTTPRequest, "HTTP2::push a.css", "error: expected an absolute path"},
		{"relative", true, true, HTTPRequest, "HTTP2::push a.css", "error: expected an absolute path"},
		{"odd fields", true, true, HTTPRequest, "HTTP2::push /a.css accept", "error: NAME VALUE pairs"},
		{"bad name", true, true, HTTPRequest, "HTTP2::push /a.css {a b} c", "error: bad header name"},
		{"connection field", true, true, HTTPRequest, "HTTP2::push /a.css connection close", "error: connection's field"},
		{"pseudo", true, true, HTTPRequest, "HTTP2::push /a.css :path /b", "error: bad header name"},
		{"priority bounds", true, true, HTTPRequest, "HTTP2::push /a.css -priority 300", "error: expected 0 to 255"},
		{"response fields without content", true, true, HTTPRequest, "HTTP2::push /a.css -- content-type x", "error: need -content or -ifile"},
		{"content and ifile", true, true, HTTPRequest, "HTTP2::push /a.css -content a -ifile b", "error: exclude each other"},
		{"no ifile", true, true, HTTPRequest, "HTTP2::push /a.css -ifile missing", "error: no such ltm ifile"},
		{"computed length", true, true, HTTPRequest, "HTTP2::push /a.css -content a -- content-length 9", "error: computed"},
		{"wrong event", true, true, ClientAccepted, "HTTP2::push /a.css", "error: not valid in CLIENT_ACCEPTED"},
		{"no uri", true, true, HTTPRequest, "HTTP2::push", "error: wrong # args"},
	}
	js := NewIFile("/Common/app.js", "/Common/app.js", []byte("let a;"))
	env := &Env{IFile: func(n string) (*IFile, bool) { return js, n == "app.js" || n == "/Common/app.js" }}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &pushFake{h2Fake: newH2Fake(t, c.active), allow: c.allow}
			got, err := evalIn(t, f, env, c.ev, c.expr)
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, want)
				}
				return
			}
			if err != nil || got != "" {
				t.Fatalf("got %q, %v", got, err)
			}
			var pushes []string
			for _, p := range f.pushes {
				pushes = append(pushes, fmt.Sprintf("%s %s %v %d %v %s %v", p.Path, p.Authority, p.Header, p.Priority, p.Local, p.Content, p.RespHeader))
			}
			if s := strings.Join(pushes, " | "); s != c.want {
				t.Errorf("pushed %q\nwant   %q", s, c.want)
			}
		})
	}
}
