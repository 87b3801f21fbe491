package rules

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func TestHTTPNeeds(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // NAME@EVENT
	}{
		{"tcp only", `when CLIENT_ACCEPTED { pool p }`, nil},
		{"http event", `when HTTP_REQUEST { pool p }`, []string{"HTTP_REQUEST@HTTP_REQUEST"}},
		{"events in source order", "when HTTP_RESPONSE { }\nwhen HTTP_REQUEST_DATA { }", []string{"HTTP_RESPONSE@HTTP_RESPONSE", "HTTP_REQUEST_DATA@HTTP_REQUEST_DATA"}},
		{"commands inside http events add nothing", `when HTTP_REQUEST { HTTP::uri /x; persist cookie insert }`, []string{"HTTP_REQUEST@HTTP_REQUEST"}},
		{"command in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { log local0. [HTTP::uri] }`, []string{"HTTP::uri@CLIENT_ACCEPTED"}},
		{"nested", `when LB_SELECTED { if { 1 } { foreach h [HTTP::header names] { } } }`, []string{"HTTP::header@LB_SELECTED"}},
		{"persist cookie", `when CLIENT_ACCEPTED { persist cookie insert c 0 }`, []string{"persist cookie@CLIENT_ACCEPTED"}},
		{"other persist modes", `when CLIENT_ACCEPTED { persist source_addr 60 }`, nil},
		{"RULE_INIT", `when RULE_INIT { set static::x [string length HTTP::uri] }`, nil},
		{"proc bodies are not when blocks", "proc p {} { return [HTTP::uri] }\nwhen CLIENT_ACCEPTED { }", nil},
		{"unsupported F5 event", `when HTTP_PROXY_REQUEST { }`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile("r", c.body)
			if r == nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range r.HTTPNeeds() {
				got = append(got, fmt.Sprintf("%s@%s", n.Name, n.Event))
				if n.Line == 0 {
					t.Errorf("%s: no line", n.Name)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("HTTPNeeds = %q, want %q", got, c.want)
			}
		})
	}
}

func TestUsesSSL(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       bool
	}{
		{"none", `when HTTP_REQUEST { pool p }`, false},
		{"SSL:: in an event", `when HTTP_REQUEST { log local0. [SSL::cipher name] }`, true},
		{"X509:: nested", `when HTTP_REQUEST { if { 1 } { set s [X509::subject [SSL::cert 0]]; set t [SSL::cert 0] } }`, true},
		{"in a proc", "proc p {} { return [SSL::cipher bits] }\nwhen HTTP_REQUEST { }", true},
		{"SSL::disable", `when CLIENT_ACCEPTED { SSL::disable }`, true},
		{"the word in a string", `when HTTP_REQUEST { log local0. "SSL::cipher" }`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile("r", c.body)
			if r == nil {
				t.Fatal(err)
			}
			if got := r.UsesSSL(); got != c.want {
				t.Errorf("UsesSSL = %v, want %v", got, c.want)
			}
			if got := len(r.SSLCommands()) > 0; got != c.want {
				t.Errorf("SSLCommands = %q", r.SSLCommands())
			}
		})
	}
}

func TestSSLCommandsOnce(t *testing.T) {
	r, err := Compile("r", `when HTTP_REQUEST { set s [X509::subject [SSL::cert 0]]; set t [SSL::cert 0]; SSL::cipher name }`)
	if r == nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(r.SSLCommands()))
	if want := []string{"SSL::cert", "SSL::cipher", "X509::subject"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SSLCommands = %q, want %q", got, want)
	}
}
