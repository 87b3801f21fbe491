package grammar

import (
	"strings"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		complete []string
		rest     string
		err      string
	}{
		{name: "empty", src: ""},
		{name: "comment only", src: "# nothing\n"},
		{name: "one line without newline", src: "list ltm pool", complete: []string{"list ltm pool"}},
		{name: "lines and semicolons", src: "create ltm pool a\ncreate ltm pool b; list ltm pool\n", complete: []string{"create ltm pool a", "create ltm pool b", "list ltm pool"}},
		{name: "open brace", src: "create ltm pool p members add {\n", rest: "create ltm pool p members add {\n"},
		{name: "complete then open", src: "list ltm pool\ncreate ltm pool p {\n    members {", complete: []string{"list ltm pool"}, rest: "create ltm pool p {\n    members {"},
		{name: "closed over lines", src: "create ltm pool p {\n    monitor http\n}\n", complete: []string{"create ltm pool p {\n    monitor http\n}"}},
		{name: "open quote", src: `modify ltm pool p description "two`, rest: `modify ltm pool p description "two`},
		{name: "quote closed on the next line", src: "modify ltm pool p description \"two\nlines\"", complete: []string{"modify ltm pool p description \"two\nlines\""}},
		{name: "trailing backslash", src: `create ltm pool p \`, rest: `create ltm pool p \`},
		{name: "trailing backslash newline", src: "create ltm pool p \\\n", rest: "create ltm pool p \\\n"},
		{name: "continued and finished", src: "create ltm pool p \\\n monitor http\n", complete: []string{"create ltm pool p \\\n monitor http"}},
		{name: "open rule body", src: "create ltm rule r {\nwhen HTTP_REQUEST {\n", rest: "create ltm rule r {\nwhen HTTP_REQUEST {\n"},
		{name: "closed rule body", src: "create ltm rule r {\nwhen HTTP_REQUEST { }\n}", complete: []string{"create ltm rule r {\nwhen HTTP_REQUEST { }\n}"}},
		{name: "rest starts after the last terminator", src: "a; b {", complete: []string{"a"}, rest: " b {"},
		{name: "stray brace", src: "list ltm pool\n}\n", complete: []string{"list ltm pool"}, err: `2:1: unexpected "}": no block is open here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			complete, rest, err := SplitStatements(tt.src)
			if strings.Join(complete, "|") != strings.Join(tt.complete, "|") || rest != tt.rest {
				t.Errorf("SplitStatements(%q) = %q, %q; want %q, %q", tt.src, complete, rest, tt.complete, tt.rest)
			}
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("error = %v, want %q", err, tt.err)
			}
			if got, want := Incomplete(tt.src), tt.rest != "" && tt.err == ""; got != want {
				t.Errorf("Incomplete = %v, want %v", got, want)
			}
		})
	}
}
