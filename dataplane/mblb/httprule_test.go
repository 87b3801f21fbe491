package mblb

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// fakeHTTPRule is an HTTPRuleHandler without Tcl: it edits and answers
// by the request path, as the rules engine would through HTTPEvent.
type fakeHTTPRule struct {
	w2 Member
}

func (f *fakeHTTPRule) OnHTTPRequest(x *HTTPEvent) error {
	msg := string(x.Message()[:x.Head().HeaderEnd])
	switch {
	case strings.HasPrefix(msg, "GET /rewrite "):
		x.SetHead(append(x.HeadBuffer(), strings.Replace(msg, "/rewrite", "/rewritten", 1)...), false)
	case strings.HasPrefix(msg, "GET /w2 "):
		x.Select(Target{Pool: f.w2.Pool, Member: f.w2.Addr})
	case strings.HasPrefix(msg, "GET /local "):
		x.Respond([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nlocal"), true)
	case strings.HasPrefix(msg, "GET /bye "):
		x.Respond([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbye"), false)
	case strings.HasPrefix(msg, "GET /reject "):
		x.Reject()
	case strings.HasPrefix(msg, "GET /fail "):
		return fmt.Errorf("rule failed")
	}
	return nil
}

func (f *fakeHTTPRule) OnHTTPResponse(x *HTTPEvent) error {
	if !strings.Contains(string(x.Request()), " /w2 ") {
		return nil
	}
	head := string(x.Message()[:x.Head().HeaderEnd])
	x.SetHead(append(x.HeadBuffer(), strings.Replace(head, "\r\n\r\n", "\r\nX-Rule: seen\r\n\r\n", 1)...), true)
	return nil
}

// TestHTTPRuleSeam drives the engine's HTTP rule seam with a fake
// handler, over one client connection per case, with and without
// OneConnect.
func TestHTTPRuleSeam(t *testing.T) {
	type step struct {
		path    string
		label   string // member label, "" for a local answer
		body    string // the body's prefix
		header  string // X-Rule
		closed  bool   // the client is closed after (or instead of) the answer
		refused bool   // no answer at all: the client is reset
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"edits and targets", []step{
			{path: "/rewrite", label: "W1", body: "W1 xff= cookie= GET /rewritten"},
			{path: "/w2", label: "W2", body: "W2 xff= cookie= GET /w2", header: "seen"},
			{path: "/local", body: "local"},
			{path: "/w2", label: "W2", header: "seen"},
			{path: "/bye", body: "bye", closed: true},
		}},
		{"reject", []step{{path: "/reject", refused: true}}},
		{"rule error", []step{{path: "/fail", refused: true}}},
	}
	for i, oc := range []bool{false, true} {
		for j, tc := range cases {
			t.Run(fmt.Sprintf("%s/oneconnect=%v", tc.name, oc), func(t *testing.T) {
				n := 10*i + 3*j
				w1 := startHTTPMember(t, fmt.Sprintf("127.0.122.%d:0", n+1), "W1")
				w2 := startHTTPMember(t, fmt.Sprintf("127.0.122.%d:0", n+2), "W2")
				p := httpPool(w1, w2)
				rule := &fakeHTTPRule{w2: w2.member(2)}
				vs := startVS(t, fmt.Sprintf("127.0.122.%d:0", n+3), httpConfig(p, oc, HTTPOptions{}),
					func(net.Conn) ClientOptions { return ClientOptions{HTTPRule: rule} })
				c := dialHTTP(t, vs)
				for k, s := range tc.steps {
					rs, bodies, err := c.do("GET", get(s.path))
					if s.refused {
						if err == nil {
							t.Fatalf("step %d: answered %q, want the client reset", k, bodies)
						}
						return
					}
					if err != nil {
						t.Fatalf("step %d %s: %v", k, s.path, err)
					}
					b := bodies[0]
					if (s.label != "" && label(b) != s.label) || !strings.HasPrefix(b, s.body) {
						t.Fatalf("step %d %s: %q, want %s %q", k, s.path, b, s.label, s.body)
					}
					if got := rs[0].Header.Get("X-Rule"); got != s.header {
						t.Fatalf("step %d %s: X-Rule %q, want %q", k, s.path, got, s.header)
					}
					if s.closed {
						c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
						if _, err := c.br.ReadByte(); err == nil || isTimeout(err) {
							t.Fatalf("step %d: the client was not closed", k)
						}
					}
				}
			})
		}
	}
}

// noResponseRule is fakeHTTPRule whose rules have no response event
// (HTTPResponseFilter): the engine must not call OnHTTPResponse, and
// responses go to the client untouched.
type noResponseRule struct {
	fakeHTTPRule
	calls int
}

func (r *noResponseRule) HandlesResponses() bool { return false }

func (r *noResponseRule) OnHTTPResponse(x *HTTPEvent) error {
	r.calls++
	return r.fakeHTTPRule.OnHTTPResponse(x)
}

func TestHTTPRuleWithoutResponseEvents(t *testing.T) {
	for i, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			n := 40 + 3*i
			w1 := startHTTPMember(t, fmt.Sprintf("127.0.122.%d:0", n+1), "W1")
			w2 := startHTTPMember(t, fmt.Sprintf("127.0.122.%d:0", n+2), "W2")
			rule := &noResponseRule{fakeHTTPRule: fakeHTTPRule{w2: w2.member(2)}}
			vs := startVS(t, fmt.Sprintf("127.0.122.%d:0", n+3), httpConfig(httpPool(w1, w2), oc, HTTPOptions{}),
				func(net.Conn) ClientOptions { return ClientOptions{HTTPRule: rule} })
			c := dialHTTP(t, vs)
			for k, path := range []string{"/w2", "/rewrite", "/w2"} {
				rs, bodies, err := c.do("GET", get(path))
				if err != nil {
					t.Fatalf("step %d %s: %v", k, path, err)
				}
				if got := rs[0].Header.Get("X-Rule"); got != "" {
					t.Fatalf("step %d %s: X-Rule %q: the response went through the rule", k, path, got)
				}
				if path == "/rewrite" && !strings.Contains(bodies[0], "GET /rewritten") {
					t.Fatalf("step %d: %q: the request rule did not run", k, bodies[0])
				}
			}
			if rule.calls != 0 {
				t.Fatalf("OnHTTPResponse called %d times", rule.calls)
			}
		})
	}
}
