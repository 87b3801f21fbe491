package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
)

const routingRule = `when CLIENT_ACCEPTED {
  if { [TCP::local_port] >= 10000 && [TCP::local_port] < 10500 } {
    pool WSH_1_pool
  } elseif { [TCP::local_port] >= 10500 && [TCP::local_port] < 11000 } {
    pool WSH_2_pool
  } else {
    drop
  }
}`

const headerRule = `when CLIENT_DATA {
  set method ""
  set host ""
  foreach line [split [string map [list "\r\n" "\n"] [TCP::payload]] "\n"] {
    if { $method eq "" } {
      set method [lindex [split $line " "] 0]
      continue
    }
    set i [string first ":" $line]
    if { $i < 0 } { continue }
    set name [string tolower [string range $line 0 [expr {$i - 1}]]]
    set value [string trim [string range $line [expr {$i + 1}] end]]
    switch -glob -- $name {
      host { set host $value }
      x-forwarded-for { set xff [string trim [lindex [split $value ","] 0]] }
      user-agent { set ua $value }
    }
  }
  switch -- $method {
    GET - HEAD { pool read_pool }
    default { pool write_pool }
  }
}`

// bigRule builds a rule of about n lines mixing the usual constructs.
func bigRule(n int) string {
	var b strings.Builder
	b.WriteString("when RULE_INIT { set static::debug 0 }\n")
	i := 0
	for lines := 1; lines < n; i++ {
		fmt.Fprintf(&b, "proc p%d {a {b 2}} {\n  if {$a > $b} { return [expr {$a * %d}] }\n  return [string repeat x $b]\n}\n", i, i)
		fmt.Fprintf(&b, "when CLIENT_DATA priority %d {\n  set len%d [TCP::payload length]\n  if { $len%d >= %d && [string match \"GET*\" [TCP::payload]] } {\n    switch -glob -- [TCP::payload 4] {\n      \"GET \" { pool p%d }\n      default { log local0. \"other %d\" }\n    }\n  }\n  TCP::release\n}\n", i%1000, i, i, i, i, i)
		lines += 14
	}
	return b.String()
}

func BenchmarkCompile200Lines(b *testing.B) {
	src := bigRule(200)
	if n := strings.Count(src, "\n"); n < 190 || n > 230 {
		b.Fatalf("rule has %d lines", n)
	}
	if _, err := Compile("big", src); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("big", src); err != nil {
			b.Fatal(err)
		}
	}
}

// nopConn is the cheapest Conn possible, so the benchmark measures the
// engine alone.
type nopConn struct{ fakeConn }

func (n *nopConn) Decide(d Decision) error { return nil }

func BenchmarkRoutingClientAccepted(b *testing.B) {
	benchEvent(b, &nopConn{*newFakeConn()}, routingRule, ClientAccepted)
}

// BenchmarkRoutingPerConnection includes taking a session from the pool and
// returning it, which is what each new connection pays.
func BenchmarkRoutingPerConnection(b *testing.B) {
	p := NewProgram(nil, mustCompile(b, "route", routingRule))
	c := &nopConn{*newFakeConn()}
	b.ReportAllocs()
	for b.Loop() {
		s := p.NewConnState(c)
		if err := s.Run(ClientAccepted); err != nil {
			b.Fatal(err)
		}
		s.Release()
	}
}

func BenchmarkHTTPHeaderParse(b *testing.B) {
	p := NewProgram(nil, mustCompile(b, "hdr", headerRule))
	c := &nopConn{*newFakeConn()}
	c.payload[ClientSide] = []byte("GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\nX-Forwarded-For: 10.1.2.3, 10.0.0.1\r\n\r\n")
	s := p.NewConnState(c)
	defer s.Release()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Run(ClientData); err != nil {
			b.Fatal(err)
		}
	}
	if v, _ := s.Var("host"); v != "www.example.com" {
		b.Fatalf("host %q", v)
	}
}

// routingHTTPRule is the 10-line HTTP_REQUEST rule of host/URI routing
// with switch and a header replace.
const routingHTTPRule = `when HTTP_REQUEST {
  switch -glob [string tolower [HTTP::host]] {
    "api.*" { pool api_pool }
    "www.example.com*" {
      if { [HTTP::path] starts_with "/app/" } { pool app_pool } else { pool web_pool }
    }
    default { pool default_pool }
  }
  HTTP::header replace X-Forwarded-For [IP::client_addr]
}`

// benchHTTP is an HTTP connection whose decisions cost nothing.
type benchHTTP struct {
	nopConn
	req HTTPHead
}

func (b *benchHTTP) HTTPRequest() *HTTPHead    { return &b.req }
func (b *benchHTTP) HTTPResponse() *HTTPHead   { return nil }
func (b *benchHTTP) HTTPRequestNum() int       { return 1 }
func (b *benchHTTP) HTTPDo(a HTTPAction) error { return nil }

// BenchmarkHTTPRequestRule is one request through the routing rule: the
// head is indexed (Reset), the rule runs, the edited head is written.
func BenchmarkHTTPRequestRule(b *testing.B) {
	out := benchHTTPRequest(b, routingHTTPRule)
	if !strings.Contains(string(out), "x-forwarded-for: 127.0.0.9\r\n") {
		b.Fatalf("head %q", out)
	}
}

// benchHTTPRequest runs rule's HTTP_REQUEST on the test request, the head
// indexed before and written after each run; it returns the last head.
func benchHTTPRequest(b *testing.B, rule string) []byte {
	p := NewProgram(nil, mustCompile(b, "route", rule))
	c := &benchHTTP{nopConn: nopConn{*newFakeConn()}}
	raw := []byte(testRequest)
	head, err := httpx.ParseRequest(raw)
	if err != nil {
		b.Fatal(err)
	}
	s := p.NewConnState(c)
	defer s.Release()
	out := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		c.req.ResetParsed(raw, &head, false)
		if err := s.Run(HTTPRequest); err != nil {
			b.Fatal(err)
		}
		out = c.req.AppendTo(out[:0])
	}
	return out
}

// BenchmarkHTTPHeadReset is the cost of handing a request head the
// framer has parsed to rules.
func BenchmarkHTTPHeadReset(b *testing.B) {
	var h HTTPHead
	raw := []byte(testRequest)
	head, err := httpx.ParseRequest(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h.ResetParsed(raw, &head, false)
	}
}

// BenchmarkHTTPHeaderRead is one HTTP::header value in a rule.
func BenchmarkHTTPHeaderRead(b *testing.B) {
	p := NewProgram(nil, mustCompile(b, "hdr", `when HTTP_REQUEST { set ua [HTTP::header value User-Agent] }`))
	c := &benchHTTP{nopConn: nopConn{*newFakeConn()}}
	if err := c.req.Reset([]byte(testRequest), false); err != nil {
		b.Fatal(err)
	}
	s := p.NewConnState(c)
	defer s.Release()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Run(HTTPRequest); err != nil {
			b.Fatal(err)
		}
	}
}
