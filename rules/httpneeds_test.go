package rules

import (
	"fmt"
	"reflect"
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
		{"unsupported F5 event", `when HTTP_CLASS_FAILED { }`, nil},
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
