package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/rules/policy"
)

// policyRuleFor compiles p as the daemon does for a virtual server whose
// iRules use the POLICY:: commands (record) or not.
func policyRuleFor(t testing.TB, p policy.Policy, record bool) *Rule {
	t.Helper()
	compile := policy.Compile
	if record {
		compile = policy.CompileRecording
	}
	c, err := compile(p)
	if err != nil || len(c.NotRun) > 0 {
		t.Fatalf("Compile: %v %v", err, c.NotRun)
	}
	info := PolicyInfo{Name: p.Name, Rules: c.Rules, Controls: c.Controls, Targets: c.Targets}
	info.ConnVar, info.RequestVar = policy.MatchVars(p.Name)
	r, err := CompilePolicy(info, c.Tcl)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.Tcl)
	}
	return r
}

// policyPair is two policies on the test request (GET /app/v1/items.json,
// Host www.example.com:8080, from 127.0.0.9): route matches its rule
// app, and its rule conn at client-accepted; posts matches nothing.
func policyPair() []policy.Policy {
	return []policy.Policy{
		{Name: "/Common/route", Requires: []string{"http"}, Rules: []policy.Rule{
			{Name: "api", Ordinal: 1, Conditions: []policy.Spec{spec("0", "operand", "http-host", "selector", "host", "values", "api.example.com")},
				Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "api")}},
			{Name: "app", Ordinal: 2, Conditions: []policy.Spec{spec("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/app/")},
				Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "app"),
					spec("1", "operand", "http-header", "verb", "insert", "name", "X-Routed", "value", "app")}},
			{Name: "tried", Ordinal: 3, Conditions: []policy.Spec{spec("0", "operand", "http-header", "name", "X-Try", "operator", "exists")},
				Actions: []policy.Spec{spec("0", "operand", "forward", "verb", "select", "pool", "tried")}},
		}},
		{Name: "/Common/posts", Strategy: "all-match", Requires: []string{"http"}, Rules: []policy.Rule{
			{Name: "conn", Ordinal: 1, Conditions: []policy.Spec{spec("0", "operand", "tcp", "event", "client-accepted", "selector", "address", "values", "10.0.0.0/8")},
				Actions: []policy.Spec{spec("0", "operand", "log", "verb", "write", "event", "client-accepted", "message", "ten")}},
			{Name: "post", Ordinal: 2, Conditions: []policy.Spec{spec("0", "operand", "http-method", "values", "POST")},
				Actions: []policy.Spec{spec("0", "operand", "http-reply", "verb", "redirect", "location", "/posted")}},
		}},
	}
}

// TestPolicyCommands runs each POLICY:: form in HTTP_REQUEST after the
// virtual's two policies, as BIG-IP runs iRules after policies.
func TestPolicyCommands(t *testing.T) {
	cases := []struct {
		cmd, want string
	}{
		{"POLICY::names active", "/Common/route /Common/posts"},
		{"POLICY::names matched", "/Common/route"},
		{"POLICY::names unmatched", "/Common/posts"},
		{"POLICY::rules /Common/route", "api app tried"},
		{"POLICY::rules route", "api app tried"},
		{"POLICY::rules matched /Common/route", "app"},
		{"POLICY::rules matched /Common/posts", ""},
		{"POLICY::rules matched /Common/other", ""},
		{"POLICY::rules /Common/other", ""},
		{"POLICY::controls", "forwarding"},
		{"POLICY::controls forwarding", "1"},
		{"POLICY::controls asm", "0"},
		{"POLICY::targets", "forward http-header http-reply log"},
		{"POLICY::targets http-reply", "1"},
		{"POLICY::targets http-uri", "0"},
		{"foreach p [POLICY::names matched] { lappend l $p [POLICY::rules matched $p] }; set l", "/Common/route app"},
		// matched alone is the name of a policy the virtual does not have.
		{"POLICY::rules matched", ""},
		// What no run could accept is refused when the rule is saved;
		// what a substitution brings, when it runs.
		{"POLICY::names", "refused: wrong # args"},
		{"POLICY::names all", `refused: POLICY::names: bad option "all"`},
		{"POLICY::names [set o all]", `error: POLICY::names: bad option "all"`},
		{"POLICY::rules", "refused: wrong # args"},
		{"POLICY::rules a b", `refused: POLICY::rules: bad option "a"`},
		{"POLICY::rules [set o a] b", "error: wrong # args"},
		{"POLICY::controls a b", "refused: wrong # args"},
		{"POLICY::targets http-uri disable", "error: POLICY::targets: no policy of the virtual server has a http-uri action"},
		{"POLICY::targets http-reply disable; POLICY::targets http-reply", "0"},
		{"POLICY::targets forward disable; POLICY::targets", "http-header http-reply log"},
		{"POLICY::targets forward disable; POLICY::targets forward enable; POLICY::targets forward", "1"},
		{"POLICY::targets forward sideways", `refused: POLICY::targets: bad option "sideways"`},
		{"POLICY::targets forward [set o sideways]", `error: POLICY::targets: bad option "sideways"`},
		{"POLICY::targets a b c", "refused: wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			var logged []string
			env := &Env{Log: func(_, line string) { logged = append(logged, line) }}
			user, err := Compile("u", "when HTTP_REQUEST {\n if { [catch { "+c.cmd+" } r] } { set r \"error: $r\" }\n log local0. \"out=$r\"\n}")
			if refusal, ok := strings.CutPrefix(c.want, "refused: "); ok {
				if err == nil || !strings.Contains(err.Error(), refusal) {
					t.Fatalf("Compile: %v, want %q", err, refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !user.UsesPolicyCommands() {
				t.Fatal("UsesPolicyCommands: false")
			}
			pp := policyPair()
			f := newHTTPFake(t, testRequest, "")
			s := NewProgram(env, policyRuleFor(t, pp[0], true), policyRuleFor(t, pp[1], true), user).NewConnState(f)
			defer s.Release()
			for _, ev := range []Event{ClientAccepted, HTTPRequest} {
				if err := s.Run(ev); err != nil {
					t.Fatal(err)
				}
			}
			if len(logged) != 1 {
				t.Fatalf("logged %q", logged)
			}
			got := logged[0][strings.Index(logged[0], "out=")+4:]
			if strings.HasPrefix(c.want, "error: ") && !strings.HasPrefix(got, c.want) || !strings.HasPrefix(c.want, "error: ") && got != c.want {
				t.Fatalf("%s = %q, want %q", c.cmd, got, c.want)
			}
		})
	}
}

// TestPolicyMatchedPerRequest: a rule decided when the client connects
// stays matched for the connection's requests; those decided at a
// request are that request's alone.
func TestPolicyMatchedPerRequest(t *testing.T) {
	pp := policyPair()
	// posts' rule conn matches this client.
	pp[1].Rules[0].Conditions[0].Values = []string{"127.0.0.0/8"}
	var logged []string
	env := &Env{Log: func(_, line string) {
		if i := strings.Index(line, "out="); i >= 0 {
			logged = append(logged, line[i+4:])
		}
	}}
	user, err := Compile("u", `when HTTP_REQUEST {
    log local0. "out=[POLICY::names matched]|[POLICY::rules matched route]|[POLICY::rules matched posts]"
    HTTP::header insert X-Try 1
}`)
	if err != nil {
		t.Fatal(err)
	}
	f := newHTTPFake(t, "GET /other HTTP/1.1\r\nHost: www.example.com\r\n\r\n", "")
	s := NewProgram(env, policyRuleFor(t, pp[0], true), policyRuleFor(t, pp[1], true), user).NewConnState(f)
	defer s.Release()
	for _, ev := range []Event{ClientAccepted, HTTPRequest, HTTPRequest} {
		if err := s.Run(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/Common/posts||conn", "/Common/route /Common/posts|tried|conn"}
	if strings.Join(logged, "\n") != strings.Join(want, "\n") {
		t.Fatalf("logged %q, want %q", logged, want)
	}
}

// TestPolicyNotRecording: a policy compiled for a virtual server whose
// iRules do not use POLICY:: records nothing, so the commands (in a rule
// the daemon would have made it record for) see no match.
func TestPolicyNotRecording(t *testing.T) {
	pp := policyPair()
	for _, record := range []bool{false, true} {
		c, err := map[bool]func(policy.Policy) (policy.Compiled, error){false: policy.Compile, true: policy.CompileRecording}[record](pp[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(c.Tcl, "_matched"); got != record {
			t.Errorf("record %v: the Tcl records matches: %v\n%s", record, got, c.Tcl)
		}
	}
	user, err := Compile("u", "when HTTP_REQUEST { log local0. [HTTP::uri] }")
	if err != nil {
		t.Fatal(err)
	}
	if user.UsesPolicyCommands() {
		t.Error("UsesPolicyCommands: true for a rule without POLICY::")
	}
}
