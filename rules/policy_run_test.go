package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/rules/policy"
)

// spec builds a policy condition or action from word pairs; "values"
// takes space-separated values.
func spec(num string, kv ...string) policy.Spec {
	s := policy.Spec{Num: num, Words: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "values" {
			s.Values = strings.Fields(kv[i+1])
			continue
		}
		s.Words[kv[i]] = kv[i+1]
	}
	return s
}

// policyRule compiles a one-policy rule for the test request.
func policyRule(t testing.TB, p policy.Policy) *Rule {
	t.Helper()
	c, err := policy.Compile(p)
	if err != nil || len(c.NotRun) > 0 {
		t.Fatalf("Compile: %v %v", err, c.NotRun)
	}
	r, err := Compile("policy "+p.Name, c.Tcl)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.Tcl)
	}
	return r
}

// TestPolicyConditions runs policies compiled by rules/policy on the test
// request (GET /app/v1/items.json?id=42&lang=en, Host www.example.com:8080,
// cookies JSESSIONID, theme and lang, from 127.0.0.9 to 127.0.0.43:10100):
// the first rule forwards to hit when its one condition holds, the
// default rule to miss.
func TestPolicyConditions(t *testing.T) {
	cases := []struct {
		name string
		cond policy.Spec
		hit  bool
	}{
		{"path starts-with", spec("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/other /APP/"), true},
		{"path starts-with, case-sensitive", spec("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "case", "case-sensitive", "values", "/APP/"), false},
		{"path ends-with", spec("0", "operand", "http-uri", "selector", "path", "operator", "ends-with", "values", ".json"), true},
		{"path contains", spec("0", "operand", "http-uri", "selector", "path", "operator", "contains", "values", "/v1/"), true},
		{"a glob character is a character", spec("0", "operand", "http-uri", "selector", "path", "operator", "contains", "values", "*"), false},
		{"uri equals", spec("0", "operand", "http-uri", "values", "/app/v1/items.json?id=42&lang=en"), true},
		{"query-string", spec("0", "operand", "http-uri", "selector", "query-string", "operator", "contains", "values", "lang=en"), true},
		{"extension", spec("0", "operand", "http-uri", "selector", "extension", "values", "json"), true},
		{"extension, not", spec("0", "operand", "http-uri", "selector", "extension", "not", "not", "values", "json"), false},
		{"path-segment", spec("0", "operand", "http-uri", "selector", "path-segment", "index", "2", "values", "v1"), true},
		{"query-parameter", spec("0", "operand", "http-uri", "selector", "query-parameter", "name", "lang", "values", "EN"), true},
		{"query-parameter, case-sensitive", spec("0", "operand", "http-uri", "selector", "query-parameter", "name", "lang", "case", "case-sensitive", "values", "EN"), false},
		{"host without its port", spec("0", "operand", "http-host", "selector", "host", "values", "www.example.com"), true},
		{"host with its port", spec("0", "operand", "http-host", "values", "www.example.com:8080"), true},
		{"the Host's port", spec("0", "operand", "http-host", "selector", "port", "values", "8080"), true},
		{"the URI's port", spec("0", "operand", "http-uri", "selector", "port", "operator", "greater", "values", "8000"), true},
		{"scheme over plain HTTP", spec("0", "operand", "http-uri", "selector", "scheme", "values", "http"), true},
		{"cookie", spec("0", "operand", "http-cookie", "name", "theme", "values", "dark"), true},
		{"cookie missing", spec("0", "operand", "http-cookie", "name", "nope", "operator", "missing"), true},
		{"header starts-with", spec("0", "operand", "http-header", "name", "user-agent", "operator", "starts-with", "values", "curl/"), true},
		{"header exists", spec("0", "operand", "http-header", "name", "Authorization", "operator", "exists"), true},
		{"header missing", spec("0", "operand", "http-header", "name", "Authorization", "operator", "missing"), false},
		{"method", spec("0", "operand", "http-method", "values", "POST PUT"), false},
		{"version", spec("0", "operand", "http-version", "values", "1.1"), true},
		{"client network", spec("0", "operand", "tcp", "selector", "address", "operator", "matches", "values", "10.0.0.0/8 127.0.0.0/24"), true},
		{"client network, not", spec("0", "operand", "tcp", "selector", "address", "not", "not", "values", "127.0.0.0/24"), false},
		{"local port", spec("0", "operand", "tcp", "selector", "port", "side", "local", "values", "10100"), true},
		{"client port greater", spec("0", "operand", "tcp", "selector", "port", "operator", "greater", "values", "40000"), true},
		{"client port less", spec("0", "operand", "tcp", "selector", "port", "operator", "less", "values", "1024"), false},
		{"tcl: value", policy.Spec{Num: "0", Words: map[string]string{"operand": "http-header", "name": "X-Forwarded-For"},
			Values: []string{"tcl:[getfield 10.9.9.9,x , 1]"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := policy.Policy{Name: "/Common/p", Requires: []string{"http"}, Rules: []policy.Rule{
				{Name: "r", Ordinal: 1, Conditions: []policy.Spec{c.cond},
					Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "hit")}},
				{Name: "default", Ordinal: 2, Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "miss")}},
			}}
			f := newHTTPFake(t, testRequest, "")
			s := NewProgram(nil, policyRule(t, p)).NewConnState(f)
			defer s.Release()
			if err := s.Run(HTTPRequest); err != nil {
				t.Fatal(err)
			}
			want := "pool miss"
			if c.hit {
				want = "pool hit"
			}
			if got := f.String(); got != want {
				t.Fatalf("decided %q, want %q", got, want)
			}
		})
	}
}

// TestPolicyActions: all-match runs every matching rule's actions in
// order; header edits, URI rewrites and tcl: values act on the request.
func TestPolicyActions(t *testing.T) {
	p := policy.Policy{Name: "/Common/p", Strategy: "all-match", Requires: []string{"http"}, Rules: []policy.Rule{
		{Name: "a", Ordinal: 1, Conditions: []policy.Spec{spec("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/app/")},
			Actions: []policy.Spec{
				spec("0", "operand", "forward", "verb", "select", "pool", "app"),
				spec("1", "operand", "http-header", "verb", "replace", "name", "X-Forwarded-For", "value", "tcl:[IP::client_addr]"),
				spec("2", "operand", "http-uri", "verb", "replace", "path", "/v2/items.json"),
			}},
		{Name: "b", Ordinal: 2, Actions: []policy.Spec{
			spec("0", "operand", "http-header", "verb", "insert", "name", "X-Policy", "value", "all match"),
			spec("1", "operand", "http-header", "verb", "remove", "name", "Authorization"),
		}},
	}}
	f := newHTTPFake(t, testRequest, "")
	s := NewProgram(nil, policyRule(t, p)).NewConnState(f)
	defer s.Release()
	if err := s.Run(HTTPRequest); err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "pool app" {
		t.Fatalf("decided %q", got)
	}
	// replace acts on the header's last occurrence, as HTTP::header
	// replace does.
	head := string(f.req.AppendTo(nil))
	for _, want := range []string{"GET /v2/items.json?id=42&lang=en HTTP/1.1\r\n", "x-forwarded-for: 127.0.0.9\r\n", "X-Policy: all match\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("no %q in\n%s", want, head)
		}
	}
	if strings.Contains(head, "Authorization") || strings.Contains(head, "10.9.9.9") {
		t.Errorf("removed or replaced headers remain:\n%s", head)
	}
}

// routingPolicy is routingHTTPRule as a policy: host and path routing,
// and X-Forwarded-For replaced.
func routingPolicy() policy.Policy {
	xff := spec("1", "operand", "http-header", "verb", "replace", "name", "X-Forwarded-For", "value", "tcl:[IP::client_addr]")
	host := func(prefix string) policy.Spec {
		return spec("0", "operand", "http-host", "selector", "host", "operator", "starts-with", "values", prefix)
	}
	to := func(pool string) policy.Spec { return spec("0", "operand", "forward", "verb", "select", "pool", pool) }
	return policy.Policy{Name: "/Common/route", Requires: []string{"http"}, Rules: []policy.Rule{
		{Name: "api", Ordinal: 1, Conditions: []policy.Spec{host("api.")}, Actions: []policy.Spec{to("api_pool"), xff}},
		{Name: "app", Ordinal: 2, Conditions: []policy.Spec{host("www.example.com"),
			spec("1", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/app/")}, Actions: []policy.Spec{to("app_pool"), xff}},
		{Name: "web", Ordinal: 3, Conditions: []policy.Spec{host("www.example.com")}, Actions: []policy.Spec{to("web_pool"), xff}},
		{Name: "default", Ordinal: 4, Actions: []policy.Spec{to("default_pool"), xff}},
	}}
}

// BenchmarkHTTPRequestPolicy is BenchmarkHTTPRequestRule's routing done by
// a policy: what a request costs through the rule a policy compiles to.
func BenchmarkHTTPRequestPolicy(b *testing.B) {
	c, err := policy.Compile(routingPolicy())
	if err != nil {
		b.Fatal(err)
	}
	out := benchHTTPRequest(b, c.Tcl)
	if !strings.Contains(string(out), "x-forwarded-for: 127.0.0.9\r\n") {
		b.Fatalf("head %q", out)
	}
}

// BenchmarkHTTPRequestPolicyRecording is BenchmarkHTTPRequestPolicy
// with the record of matched rules the POLICY:: commands read: what a
// request costs more on a virtual server whose iRules use them.
func BenchmarkHTTPRequestPolicyRecording(b *testing.B) {
	c, err := policy.CompileRecording(routingPolicy())
	if err != nil {
		b.Fatal(err)
	}
	out := benchHTTPRequest(b, c.Tcl)
	if !strings.Contains(string(out), "x-forwarded-for: 127.0.0.9\r\n") {
		b.Fatalf("head %q", out)
	}
}

// TestPolicyMoments: a condition read when the client connects is
// remembered for the rule decided at each request of the connection.
func TestPolicyMoments(t *testing.T) {
	for _, c := range []struct {
		network, want string
	}{{"127.0.0.0/24", "pool hit"}, {"10.0.0.0/8", "pool miss"}} {
		p := policy.Policy{Name: "/Common/p", Requires: []string{"http"}, Rules: []policy.Rule{
			{Name: "r", Ordinal: 1, Conditions: []policy.Spec{
				spec("0", "operand", "tcp", "event", "client-accepted", "selector", "address", "values", c.network),
				spec("1", "operand", "http-method", "values", "GET"),
			}, Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "hit")}},
			{Name: "default", Ordinal: 2, Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "miss")}},
		}}
		f := newHTTPFake(t, testRequest, "")
		s := NewProgram(nil, policyRule(t, p)).NewConnState(f)
		for _, ev := range []Event{ClientAccepted, HTTPRequest} {
			if err := s.Run(ev); err != nil {
				t.Fatal(err)
			}
		}
		s.Release()
		if got := f.String(); got != c.want {
			t.Errorf("client network %s: decided %q, want %q", c.network, got, c.want)
		}
	}
}

// TestPolicyPortWithoutHost: a Host that names no port stands for the
// virtual's.
func TestPolicyPortWithoutHost(t *testing.T) {
	p := policy.Policy{Name: "/Common/p", Requires: []string{"http"}, Rules: []policy.Rule{
		{Name: "r", Conditions: []policy.Spec{spec("0", "operand", "http-host", "selector", "port", "values", "10100")},
			Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "hit")}},
	}}
	f := newHTTPFake(t, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", "")
	s := NewProgram(nil, policyRule(t, p)).NewConnState(f)
	defer s.Release()
	if err := s.Run(HTTPRequest); err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "pool hit" {
		t.Fatalf("decided %q, want the virtual's port 10100 to match", got)
	}
}
