package fwdproxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pathRules decides by the request's path, as a rule would by HTTP::uri.
type pathRules struct{}

func (pathRules) Request(x *RuleEvent) error {
	line, _, _ := bytes.Cut(x.Head, []byte("\r\n"))
	switch {
	case bytes.Contains(line, []byte("/answer")):
		x.Answer, x.KeepAlive = []byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno"), true
	case bytes.Contains(line, []byte("/close")):
		x.CloseAfter = true
	case bytes.Contains(line, []byte("/reset")):
		x.Reset = true
	case bytes.Contains(line, []byte("/drop")):
		x.Close = true
	case bytes.Contains(line, []byte("/rewrite")):
		// HTTP::uri to another origin, and a field edited.
		x.Edited = bytes.Replace(x.Head, []byte("http://one.test:8080/rewrite"), []byte("http://two.test:8080/moved"), 1)
		x.Edited = bytes.Replace(x.Edited, []byte("\r\n\r\n"), []byte("\r\nUser-Agent: rule\r\n\r\n"), 1)
	}
	return nil
}

func (pathRules) Proxy(x *RuleEvent, connect bool) error {
	if connect && x.Hop.Port() != 443 {
		x.Answer, x.KeepAlive = []byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 4\r\n\r\nport"), true
	}
	return nil
}

func (pathRules) Response(x *RuleEvent) error {
	x.Edited = bytes.Replace(x.Head, []byte("\r\n\r\n"), []byte("\r\nX-Hop: "+x.Hop.String()+"\r\n\r\n"), 1)
	return nil
}

func (pathRules) ProxyResponse(*RuleEvent) error { return nil }

// TestProxyRules: what a rule decides is carried out on real connections:
// its answer (the client kept unless the request had a body), a close
// after the answer, a reset, a drop, a rewritten request, an edited
// response, a refused CONNECT.
func TestProxyRules(t *testing.T) {
	startOrigin(t, "127.22.1.30:8080", "O1", false)
	startOrigin(t, "127.22.1.31:8080", "O2", false)
	f := startProxyRules(t, Config{ConnectAllow: true}, 10*time.Second, pathRules{},
		"one.test. 60 IN A 127.22.1.30", "two.test. 60 IN A 127.22.1.31")
	for _, tc := range []struct {
		name, req string
		status    int    // 0: the connection ends without an answer
		body      string // a prefix of the answer's body
		hop       string // X-Hop the response rule added
		kept      bool   // the connection serves another request after it
	}{
		{name: "passed", req: "GET http://one.test:8080/a HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", status: 200, body: "O1 GET /a one.test:8080", hop: "127.22.1.30:8080", kept: true},
		{name: "answered", req: "GET http://one.test:8080/answer HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 403, body: "no", kept: true},
		{name: "answered with a body unread", req: "POST http://one.test:8080/answer HTTP/1.1\r\nHost: one.test\r\nContent-Length: 3\r\n\r\nabc", status: 403, body: "no"},
		{name: "closed after the answer", req: "GET http://one.test:8080/close HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200, body: "O1 GET /close", hop: "127.22.1.30:8080"},
		{name: "reset", req: "GET http://one.test:8080/reset HTTP/1.1\r\nHost: one.test\r\n\r\n"},
		{name: "dropped", req: "GET http://one.test:8080/drop HTTP/1.1\r\nHost: one.test\r\n\r\n"},
		{name: "rewritten to another origin", req: "GET http://one.test:8080/rewrite HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", status: 200, body: `O2 GET /moved two.test:8080 ua="rule"`, hop: "127.22.1.31:8080", kept: true},
		{name: "CONNECT refused by the rule", req: "CONNECT one.test:8080 HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", status: 403, body: "port", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", f.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			io.WriteString(c, tc.req)
			method, _, _ := strings.Cut(tc.req, " ")
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if tc.status == 0 {
				if err == nil {
					t.Fatalf("got %d, want the connection ended", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.HasPrefix(string(b), tc.body) || resp.Header.Get("X-Hop") != tc.hop {
				t.Errorf("= %d %q X-Hop %q, want %d %q %q", resp.StatusCode, b, resp.Header.Get("X-Hop"), tc.status, tc.body, tc.hop)
			}
			io.WriteString(c, "GET http://one.test:8080/again HTTP/1.1\r\nHost: one.test\r\n\r\n")
			resp, err = http.ReadResponse(br, nil)
			if kept := err == nil && resp.StatusCode == 200; kept != tc.kept {
				t.Errorf("connection kept = %v (%v), want %v", kept, err, tc.kept)
			}
		})
	}
}
