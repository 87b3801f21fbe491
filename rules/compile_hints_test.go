package rules

import (
	"errors"
	"strings"
	"testing"
)

// TestCompileHints: mistakes that Tcl reports only as an unknown
// command or a bad argument count name their likely cause, with the
// position of the offending word.
func TestCompileHints(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // substrings of the error
	}{
		{"else on its own line", "when HTTP_REQUEST {\n  if { 1 } { drop }\n  else { reject }\n}",
			[]string{":3:3:", `unknown command "else"`, "same line", "a newline ends the if command"}},
		{"elseif on its own line", "when HTTP_REQUEST {\n  if { 0 } { drop }\n    elseif { 1 } { reject }\n}",
			[]string{":3:5:", `unknown command "elseif"`, "same line"}},
		{"else in a proc", "proc p {x} {\n  if {$x} { return 1 }\n  else { return 0 }\n}",
			[]string{":3:3:", `unknown command "else"`}},
		{"extra close-brace at the end", "when CLIENT_ACCEPTED {\n  drop\n}\n}\n",
			[]string{":4:1:", `unknown command "}"`, "extra close-brace"}},
		{"extra close-brace in a body", "when CLIENT_ACCEPTED {\n  if {1} { drop } }\n}\n",
			[]string{`"}"`, "extra close-brace"}},
		{"proc without an argument list", "proc nx {\n  drop\n}\nwhen CLIENT_ACCEPTED { call nx }",
			[]string{":1:1:", `should be "proc name args body"`, "proc nx has a body but no argument list", "proc nx {} {...}"}},
		{"proc with too many words", "proc p {} {} {}",
			[]string{":1:1:", `should be "proc name args body"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.name, c.body)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v; want a *CompileError", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
	// A correct if/else chain is untouched.
	if _, err := Compile("ok", "when HTTP_REQUEST {\n  if { 1 } {\n    drop\n  } elseif { 0 } {\n    reject\n  } else {\n    discard\n  }\n}"); err != nil {
		t.Errorf("if/elseif/else: %v", err)
	}
}
