package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/openltm/openltm/rules"
	"github.com/openltm/openltm/rules/tcl"
)

// cond and act build specs the way the daemon reads them.
func cond(num string, kv ...string) Spec { return spec(num, kv) }
func act(num string, kv ...string) Spec  { return spec(num, kv) }

func spec(num string, kv []string) Spec {
	s := Spec{Num: num, Words: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "values" {
			s.Values = strings.Fields(kv[i+1])
			continue
		}
		s.Words[kv[i]] = kv[i+1]
	}
	return s
}

func httpPolicy(strategy string, rs ...Rule) Policy {
	return Policy{Name: "/Common/p", Strategy: strategy, Requires: []string{"http"}, Rules: rs}
}

func TestCompile(t *testing.T) {
	api := Rule{Name: "api", Ordinal: 2,
		Conditions: []Spec{cond("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/api")},
		Actions:    []Spec{act("0", "operand", "forward", "verb", "select", "pool", "/Common/api")}}
	host := Rule{Name: "host", Ordinal: 1,
		Conditions: []Spec{
			cond("0", "operand", "http-host", "selector", "host", "values", "a.example b.example"),
			cond("1", "operand", "http-header", "name", "X-Env", "case", "case-sensitive", "values", "Staging"),
		},
		Actions: []Spec{
			act("0", "operand", "http-header", "verb", "insert", "name", "X-Via", "value", "tcl:[IP::client_addr]"),
			act("1", "operand", "http-header", "event", "response", "verb", "insert", "name", "X-Policy", "value", "host"),
		}}
	redirect := Rule{Name: "default", Ordinal: 3,
		Actions: []Spec{act("0", "operand", "http-reply", "verb", "redirect", "location", "tcl:https://[HTTP::host][HTTP::uri]")}}
	for _, tc := range []struct {
		name string
		p    Policy
		want []string // in this order in the Tcl
	}{
		{"first match in ordinal order", httpPolicy("first-match", api, host, redirect), []string{
			"when HTTP_REQUEST priority 0 {",
			"if { ([string equal -nocase a.example " + hostOnly + "] || [string equal -nocase b.example " + hostOnly + "]) && [string equal Staging [HTTP::header value X-Env]] } {",
			"HTTP::header insert X-Via \"[IP::client_addr]\"",
			"lappend __ltm_policy_Common_p_request m0",
			"} elseif { [string match -nocase /api* [HTTP::path]] } {",
			"pool /Common/api",
			"} elseif { 1 } {",
			"HTTP::redirect \"https://[HTTP::host][HTTP::uri]\"",
			"when HTTP_RESPONSE priority 0 {",
			"if { [lsearch -exact $__ltm_policy_Common_p_request m0] >= 0 } {",
			"HTTP::header insert X-Policy host",
		}},
		{"all match runs every rule that holds", httpPolicy("all-match", api, redirect), []string{
			"    if { [string match -nocase /api* [HTTP::path]] } {\n        pool /Common/api\n    }\n",
			"    if { 1 } {\n",
		}},
		{"best match prefers the rule with more conditions", httpPolicy("best-match", api, host), []string{
			"X-Env", "} elseif { [string match -nocase /api* [HTTP::path]] } {",
		}},
		{"a rule read at the response", httpPolicy("", api, Rule{Name: "missing", Ordinal: 5,
			Conditions: []Spec{
				cond("0", "operand", "http-uri", "selector", "path", "operator", "starts-with", "values", "/shop"),
				cond("1", "operand", "http-status", "event", "response", "values", "404 410"),
			},
			Actions: []Spec{act("0", "operand", "http-header", "event", "response", "verb", "insert", "name", "X-Gone", "value", "yes")}}), []string{
			"when HTTP_REQUEST priority 0 {\n    set __ltm_policy_Common_p_request {}\n",
			"pool /Common/api",
			"    if { [string match -nocase /shop* [HTTP::path]] } { lappend __ltm_policy_Common_p_request c1 }\n}\n",
			"when HTTP_RESPONSE priority 0 {\n",
			"if { [lsearch -exact $__ltm_policy_Common_p_request c1] >= 0 && ([string equal -nocase 404 [HTTP::status]] || [string equal -nocase 410 [HTTP::status]]) } {\n        HTTP::header insert X-Gone yes\n",
		}},
		{"SNI read at the client's handshake", Policy{Name: "/Common/sni", Rules: []Rule{{Name: "api",
			Conditions: []Spec{cond("0", "operand", "ssl-extension", "event", "ssl-client-hello", "selector", "server-name", "values", "api.example")},
			Actions:    []Spec{act("0", "operand", "forward", "event", "ssl-client-hello", "verb", "select", "pool", "/Common/api")}}}}, []string{
			"when CLIENTSSL_HANDSHAKE priority 0 {\n    if { [string equal -nocase api.example [string range [SSL::extensions -type 0] 9 end]] } {\n        pool /Common/api\n",
		}},
		{"a rule read at three moments", httpPolicy("", Rule{Name: "r",
			Conditions: []Spec{
				cond("0", "operand", "tcp", "event", "client-accepted", "selector", "address", "values", "10.0.0.0/8"),
				cond("1", "operand", "http-method", "values", "POST"),
			},
			Actions: []Spec{
				act("0", "operand", "forward", "verb", "select", "pool", "/Common/a"),
				act("1", "operand", "http-header", "event", "response", "verb", "remove", "name", "Server"),
			}}), []string{
			"when CLIENT_ACCEPTED priority 0 {\n    set __ltm_policy_Common_p_accept {}\n    if { [IP::addr [IP::client_addr] equals 10.0.0.0/8] } { lappend __ltm_policy_Common_p_accept c0 }\n}\n",
			"when HTTP_REQUEST priority 0 {\n    set __ltm_policy_Common_p_request {}\n    if { [lsearch -exact $__ltm_policy_Common_p_accept c0] >= 0 && [string equal -nocase POST [HTTP::method]] } {\n        pool /Common/a\n        lappend __ltm_policy_Common_p_request m0\n",
			"when HTTP_RESPONSE priority 0 {\n    if { [lsearch -exact $__ltm_policy_Common_p_request m0] >= 0 } {\n        HTTP::header remove Server\n",
		}},
		{"a rate class for the connection", Policy{Name: "/Common/rc", Rules: []Rule{{Name: "slow",
			Conditions: []Spec{cond("0", "operand", "tcp", "selector", "address", "values", "10.0.0.0/8")},
			Actions:    []Spec{act("0", "operand", "forward", "verb", "select", "rateclass", "/Common/rc_2m")}}}}, []string{
			"when CLIENT_ACCEPTED priority 0 {",
			"rateclass /Common/rc_2m",
		}},
		{"a tcp policy runs when the client connects", Policy{Name: "/Common/t", Rules: []Rule{{Name: "inside",
			Conditions: []Spec{cond("0", "operand", "tcp", "selector", "address", "operator", "matches", "values", "10.0.0.0/8 192.168.1.1")},
			Actions:    []Spec{act("0", "operand", "forward", "verb", "reset")}}}}, []string{
			"when CLIENT_ACCEPTED priority 0 {",
			"if { ([IP::addr [IP::client_addr] equals 10.0.0.0/8] || [IP::addr [IP::client_addr] equals 192.168.1.1]) } {",
			"reject",
		}},
		{"geolocation of the client", Policy{Name: "/Common/g", Rules: []Rule{{Name: "eu",
			Conditions: []Spec{
				cond("0", "operand", "geoip", "event", "client-accepted", "selector", "continent", "values", "EU"),
				cond("1", "operand", "geoip", "event", "client-accepted", "selector", "country-code", "not", "not", "values", "FR DE"),
				cond("2", "operand", "geoip", "event", "client-accepted", "selector", "isp", "operator", "contains", "values", "Cable"),
			},
			Actions: []Spec{act("0", "operand", "forward", "event", "client-accepted", "verb", "select", "pool", "/Common/eu")}}}}, []string{
			"when CLIENT_ACCEPTED priority 0 {",
			"[string equal -nocase EU [whereis [IP::client_addr] continent]]",
			"!(([string equal -nocase FR [whereis [IP::client_addr] country]] || [string equal -nocase DE [whereis [IP::client_addr] country]]))",
			"[string match -nocase *Cable* [whereis [IP::client_addr] isp]]",
			"pool /Common/eu",
		}},
		{"not, ends-with, a cookie, a node with its port", httpPolicy("", Rule{Name: "r",
			Conditions: []Spec{
				cond("0", "operand", "http-uri", "selector", "extension", "not", "not", "values", "php"),
				cond("1", "operand", "http-cookie", "name", "tier", "operator", "ends-with", "values", "gold"),
			},
			Actions: []Spec{act("0", "operand", "forward", "verb", "select", "node", "10.1.1.1:8080")}}), []string{
			"!([string equal -nocase php [string range",
			"[string match -nocase *gold [HTTP::cookie value tier]]",
			"node 10.1.1.1 8080",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(tc.p)
			if err != nil || len(c.NotRun) > 0 {
				t.Fatalf("Compile: %v %v", err, c.NotRun)
			}
			rest := c.Tcl
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("missing (or out of order) %q in\n%s", w, c.Tcl)
				}
				rest = rest[i+len(w):]
			}
			if _, err := rules.Compile(tc.p.Name, c.Tcl); err != nil {
				t.Fatalf("the rules engine refuses the policy's rule: %v\n%s", err, c.Tcl)
			}
		})
	}
}

// TestCompileNeeds: what a policy needs of its virtual servers.
func TestCompileNeeds(t *testing.T) {
	sni := Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "ssl-extension", "event", "ssl-client-hello", "selector", "server-name", "values", "a")},
		Actions: []Spec{act("0", "operand", "forward", "verb", "select", "pool", "/Common/a")}}
	for _, tc := range []struct {
		name      string
		p         Policy
		http, tls bool
	}{
		{"http", httpPolicy("", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "http-uri", "values", "/")}}), true, false},
		{"tcp", Policy{Name: "/Common/t", Rules: []Rule{{Name: "r", Conditions: []Spec{cond("0", "operand", "tcp", "selector", "port", "values", "80")}}}}, false, false},
		{"SNI", Policy{Name: "/Common/s", Rules: []Rule{sni}}, false, true},
		{"SNI and http", httpPolicy("", sni), true, true},
		{"SNI at no moment named", Policy{Name: "/Common/s", Rules: []Rule{{Name: "r",
			Conditions: []Spec{cond("0", "operand", "ssl-extension", "selector", "server-name", "values", "a")},
			Actions:    []Spec{act("0", "operand", "forward", "verb", "select", "pool", "/Common/a")}}}}, false, true},
	} {
		c, err := Compile(tc.p)
		if err != nil || c.HTTP != tc.http || c.TLS != tc.tls {
			t.Errorf("%s: HTTP %v TLS %v (%v), want %v %v", tc.name, c.HTTP, c.TLS, err, tc.http, tc.tls)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Rule
		want string
	}{
		{"forward without a target", Rule{Name: "r", Actions: []Spec{act("0", "operand", "forward", "verb", "select")}},
			"Policy '/Common/p', rule 'r'; missing or invalid target."},
		{"a condition without operand", Rule{Name: "r", Conditions: []Spec{cond("0", "values", "x")}},
			"condition 0 has no operand"},
		{"a header without its name", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "http-header", "values", "x")}},
			"http-header needs a name"},
		{"equals without values", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "http-uri", "selector", "path")}},
			"equals needs values"},
		{"a redirect without location", Rule{Name: "r", Actions: []Spec{act("0", "operand", "http-reply", "verb", "redirect")}},
			"http-reply redirect needs location"},
		{"a bad address", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "tcp", "selector", "address", "values", "10.0.0.300")}},
			"is not an address or a network"},
		{"a request action on a rule read at the response", Rule{Name: "r",
			Conditions: []Spec{cond("0", "operand", "http-status", "event", "response", "values", "404")},
			Actions:    []Spec{act("0", "operand", "forward", "event", "request", "verb", "select", "pool", "/Common/a")}},
			"action 0 runs at request, but the rule's conditions are read at response"},
		{"an HTTP action when the client connects", Rule{Name: "r", Actions: []Spec{act("0", "operand", "http-header", "event", "client-accepted", "verb", "remove", "name", "X")}},
			"action 0: http-header runs at request or response, not at client-accepted"},
		{"SNI before the handshake", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "ssl-extension", "event", "client-accepted", "selector", "server-name", "values", "a")}},
			"ssl-extension is read from ssl-client-hello on, not at client-accepted"},
		{"an action before its rule's conditions", Rule{Name: "r",
			Conditions: []Spec{cond("0", "operand", "http-uri", "values", "/")},
			Actions:    []Spec{act("0", "operand", "forward", "event", "client-accepted", "verb", "reset")}},
			"action 0 runs at client-accepted, but the rule's conditions are read at request"},
		{"a number compared with a word", Rule{Name: "r", Conditions: []Spec{cond("0", "operand", "tcp", "selector", "port", "operator", "less", "values", "http")}},
			"compares numbers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(httpPolicy("first-match", tc.r))
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestCompileNotRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Rule
		want string
	}{
		{"ASM", Rule{Name: "waf", Actions: []Spec{act("0", "operand", "asm", "verb", "enable", "policy", "/Common/owasp")}}, "action 0: asm enable"},
		{"CPU usage", Rule{Name: "cpu", Conditions: []Spec{cond("0", "operand", "cpu-usage", "selector", "last-1min", "operator", "greater", "values", "90")}}, "reads cpu-usage last-1min"},
		{"a response condition openltm does not read", Rule{Name: "s", Conditions: []Spec{cond("0", "operand", "http-status", "event", "response", "selector", "text", "values", "Not")}}, "reads http-status text at response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(httpPolicy("", tc.r))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.NotRun) == 0 || !strings.Contains(strings.Join(c.NotRun, "; "), tc.want) || c.Tcl != "" {
				t.Fatalf("NotRun %q Tcl %q, want a note with %q and no rule", c.NotRun, c.Tcl, tc.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	in := tcl.NewInterp(tcl.NewCommands())
	for _, s := range []string{"", "plain", "two words", `a"b`, "[cmd]", "$var", "{brace", "}", `back\slash`, "semi;colon", "#hash", "tab\tnl\n", "é"} {
		v, err := in.EvalString("set v " + quote(s))
		if err != nil || v.String() != s {
			t.Errorf("%q quoted as %s reads back %q, %v", s, quote(s), v.String(), err)
		}
	}
	// A tcl: value is substituted when it runs.
	v, err := in.EvalString("set host www.example; set uri /a; set v " + literal("tcl:https://${host}$uri"))
	if err != nil || v.String() != "https://www.example/a" {
		t.Errorf("tcl: value reads %q, %v", v.String(), err)
	}
	// One with a double quote is substituted by subst, with the same value.
	v, err = in.EvalString("set uri /a/b; set v " + literal(`tcl:[string map {"/a" ""} $uri]`))
	if err != nil || v.String() != "/b" {
		t.Errorf("tcl: value with a quote reads %q, %v", v.String(), err)
	}
	// A literal glob pattern matches itself only.
	v, err = in.EvalString("string match " + globPattern("a*[b]?", "", "*") + " {a*[b]?tail}")
	if err != nil || v.String() != "1" {
		t.Errorf("glob of a*[b]? on itself: %q, %v", v.String(), err)
	}
	v, _ = in.EvalString("string match " + globPattern("a*", "", "*") + " abc")
	if v.String() != "0" {
		t.Errorf("glob of a* matched abc")
	}
}

// TestNeeds: the requires and controls BIG-IP lists for a policy's rules.
func TestNeeds(t *testing.T) {
	p := Policy{Name: "/Common/p", Rules: []Rule{
		{Name: "a", Conditions: []Spec{cond("0", "operand", "tcp", "selector", "port", "values", "80"), cond("1", "operand", "http-method", "values", "GET")},
			Actions: []Spec{act("0", "operand", "forward", "verb", "select", "pool", "/Common/a")}},
		{Name: "b", Conditions: []Spec{cond("0", "operand", "ssl-extension", "selector", "server-name", "values", "x")},
			Actions: []Spec{act("0", "operand", "persist", "verb", "source-address"), act("1", "operand", "http-header", "verb", "remove", "name", "X")}},
	}}
	req, ctl := Needs(p)
	if strings.Join(req, " ") != "client-ssl http tcp" || strings.Join(ctl, " ") != "forwarding persistence" {
		t.Fatalf("requires %v controls %v", req, ctl)
	}
}

// TestCompileHello: a policy reading or acting at ssl-client-hello has a
// second form for virtual servers that pass TLS through, the same rule
// with that moment at CLIENTSSL_CLIENTHELLO (the hello is all they read
// of the handshake); its other moments are unchanged. A policy without
// that moment has none.
func TestCompileHello(t *testing.T) {
	sni := func(op, v string) Spec {
		return cond("0", "operand", "ssl-extension", "event", "ssl-client-hello", "selector", "server-name", "operator", op, "values", v)
	}
	fwd := act("0", "operand", "forward", "event", "ssl-client-hello", "verb", "select", "pool", "/Common/api")
	for _, tc := range []struct {
		name      string
		p         Policy
		want      []string // in this order in HelloTcl ("" when none)
		handshake bool     // Tcl runs the moment at CLIENTSSL_HANDSHAKE
	}{
		{"SNI starts with", Policy{Name: "/Common/s", Rules: []Rule{{Name: "api", Conditions: []Spec{sni("starts-with", "api.")}, Actions: []Spec{fwd}}}}, []string{
			"when CLIENTSSL_CLIENTHELLO priority 0 {\n    if { [string match -nocase api.* [string range [SSL::extensions -type 0] 9 end]] } {\n        pool /Common/api\n",
		}, true},
		{"not ends-with, reset", Policy{Name: "/Common/s", Rules: []Rule{{Name: "r",
			Conditions: []Spec{cond("0", "operand", "ssl-extension", "event", "ssl-client-hello", "selector", "server-name", "operator", "ends-with", "not", "not", "values", ".example .test")},
			Actions:    []Spec{act("0", "operand", "forward", "event", "ssl-client-hello", "verb", "reset")}}}}, []string{
			"when CLIENTSSL_CLIENTHELLO priority 0 {",
			"if { !(([string match -nocase *.example [string range [SSL::extensions -type 0] 9 end]] || [string match -nocase *.test ",
			"reject",
		}, true},
		{"a client-accepted condition remembered for the hello", Policy{Name: "/Common/s", Rules: []Rule{{Name: "r",
			Conditions: []Spec{cond("0", "operand", "tcp", "event", "client-accepted", "selector", "port", "values", "443"), sni("contains", "shop")},
			Actions:    []Spec{act("0", "operand", "log", "event", "ssl-client-hello", "verb", "write", "message", "shop"), fwd}}}}, []string{
			"when CLIENT_ACCEPTED priority 0 {\n    set __ltm_policy_Common_s_accept {}\n",
			"when CLIENTSSL_CLIENTHELLO priority 0 {\n    if { [lsearch -exact $__ltm_policy_Common_s_accept c0] >= 0 && [string match -nocase *shop* ",
			"log local0. shop",
			"pool /Common/api",
		}, true},
		{"no hello moment", Policy{Name: "/Common/t", Rules: []Rule{{Name: "r",
			Conditions: []Spec{cond("0", "operand", "tcp", "selector", "port", "values", "443")},
			Actions:    []Spec{act("0", "operand", "forward", "verb", "select", "pool", "/Common/api")}}}}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(tc.p)
			if err != nil || len(c.NotRun) > 0 {
				t.Fatalf("Compile: %v %v", err, c.NotRun)
			}
			if (c.HelloTcl != "") != (tc.want != nil) || c.TLS != (tc.want != nil) {
				t.Fatalf("TLS %v, HelloTcl:\n%s", c.TLS, c.HelloTcl)
			}
			if strings.Contains(c.Tcl, "CLIENTSSL_HANDSHAKE") != tc.handshake || strings.Contains(c.HelloTcl, "CLIENTSSL_HANDSHAKE") {
				t.Fatalf("Tcl:\n%s\nHelloTcl:\n%s", c.Tcl, c.HelloTcl)
			}
			rest := c.HelloTcl
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("missing (or out of order) %q in\n%s", w, c.HelloTcl)
				}
				rest = rest[i+len(w):]
			}
			if c.HelloTcl == "" {
				return
			}
			r, err := rules.Compile(tc.p.Name, c.HelloTcl)
			if err != nil {
				t.Fatalf("the rules engine refuses the policy's hello rule: %v\n%s", err, c.HelloTcl)
			}
			if !r.Handles(rules.ClientSSLClientHello) || r.Handles(rules.ClientSSLHandshake) {
				t.Fatalf("the hello rule does not run at CLIENTSSL_CLIENTHELLO alone")
			}
		})
	}
}

// TestCompileRecording: the recording rule notes each matched rule in
// the variable of the moment it is decided at, empties the request's
// record as each request starts (adding a request block where the
// policy has none), and Compile's rule notes nothing.
func TestCompileRecording(t *testing.T) {
	conn, req := MatchVars("/Common/p")
	if conn != "__ltm_policy_Common_p_matched_conn" || req != "__ltm_policy_Common_p_matched" {
		t.Fatalf("MatchVars: %q %q", conn, req)
	}
	fwd := act("0", "operand", "forward", "verb", "select", "pool", "/Common/a")
	cases := []struct {
		name string
		p    Policy
		want []string
	}{
		{"first-match at the request", httpPolicy("first-match",
			Rule{Name: "a b", Ordinal: 1, Conditions: []Spec{cond("0", "operand", "http-method", "values", "GET")}, Actions: []Spec{fwd}},
			Rule{Name: "default", Ordinal: 2, Actions: []Spec{fwd}}),
			[]string{"when HTTP_REQUEST priority 0 {\n    set " + req + " {}\n    if {", "        lappend " + req + " {a b}\n", "    } elseif { 1 } {\n        lappend " + req + " default\n"}},
		{"at the connection", Policy{Name: "/Common/p", Rules: []Rule{{Name: "inside", Conditions: []Spec{cond("0", "operand", "tcp", "selector", "address", "values", "10.0.0.0/8")}, Actions: []Spec{fwd}}}},
			[]string{"when CLIENT_ACCEPTED priority 0 {\n    set " + conn + " {}\n", "        lappend " + conn + " inside\n"}},
		{"at the TLS hello", Policy{Name: "/Common/p", Rules: []Rule{{Name: "sni",
			Conditions: []Spec{cond("0", "operand", "ssl-extension", "event", "ssl-client-hello", "selector", "server-name", "values", "a.example")},
			Actions:    []Spec{act("0", "operand", "forward", "event", "ssl-client-hello", "verb", "select", "pool", "/Common/a")}}}},
			[]string{"when CLIENTSSL_HANDSHAKE priority 0 {\n    if {", "        lappend " + conn + " sni\n"}},
		{"at the response alone", httpPolicy("all-match",
			Rule{Name: "ok", Conditions: []Spec{cond("0", "operand", "http-status", "event", "response", "values", "200")},
				Actions: []Spec{act("0", "operand", "http-header", "event", "response", "verb", "insert", "name", "X", "value", "1")}}),
			[]string{"when HTTP_REQUEST priority 0 {\n    set " + req + " {}\n}\n", "when HTTP_RESPONSE priority 0 {\n", "        lappend " + req + " ok\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := CompileRecording(c.p)
			if err != nil || len(rec.NotRun) > 0 {
				t.Fatalf("CompileRecording: %v %v", err, rec.NotRun)
			}
			for _, w := range c.want {
				if !strings.Contains(rec.Tcl, w) {
					t.Errorf("no %q in\n%s", w, rec.Tcl)
				}
			}
			if _, err := rules.Compile("policy", rec.Tcl); err != nil {
				t.Errorf("%v\n%s", err, rec.Tcl)
			}
			if rec.TLS && !strings.Contains(rec.HelloTcl, "lappend "+conn+" ") {
				t.Errorf("the hello's Tcl does not record:\n%s", rec.HelloTcl)
			}
			plain, err := Compile(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(plain.Tcl, "_matched") {
				t.Errorf("Compile records:\n%s", plain.Tcl)
			}
		})
	}
}

// TestDescribe: what the POLICY:: commands report of a policy.
func TestDescribe(t *testing.T) {
	p := httpPolicy("",
		Rule{Name: "second", Ordinal: 2, Actions: []Spec{act("0", "operand", "http-header", "verb", "insert", "name", "X", "value", "1"), act("1", "operand", "forward", "verb", "select", "pool", "a")}},
		Rule{Name: "first", Ordinal: 1, Actions: []Spec{act("0", "operand", "log", "verb", "write", "message", "m")}})
	c, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Rules, " ") + "|" + strings.Join(c.Controls, " ") + "|" + strings.Join(c.Targets, " "); got != "first second|forwarding|forward http-header log" {
		t.Fatalf("rules|controls|targets = %q", got)
	}
}

// TestTargetOffVar: the recording rule tests the variable
// POLICY::targets sets, and only the recording rule does.
func TestTargetOffVar(t *testing.T) {
	if got, want := TargetOffVar("http-header"), rules.PolicyTargetOffVar("http-header"); got != want {
		t.Fatalf("policy %q, rules %q", got, want)
	}
	p := httpPolicy("first-match", Rule{Name: "all", Actions: []Spec{act("0", "operand", "http-header", "verb", "insert", "name", "X", "value", "1")}})
	rec, err := CompileRecording(p)
	if err != nil {
		t.Fatal(err)
	}
	if w := "if {![info exists " + TargetOffVar("http-header") + "]} { HTTP::header insert"; !strings.Contains(rec.Tcl, w) {
		t.Errorf("no %q in\n%s", w, rec.Tcl)
	}
	plain, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.Tcl, "info exists") {
		t.Errorf("the rule that records nothing tests a target:\n%s", plain.Tcl)
	}
}
