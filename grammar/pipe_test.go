package grammar

import "testing"

func TestSplitPipe(t *testing.T) {
	for _, c := range []struct {
		in, cmd, filters string
		ok               bool
	}{
		{"list ltm pool", "list ltm pool", "", false},
		{"list ltm pool | grep address", "list ltm pool", " grep address", true},
		{"list ltm pool|grep a | head -2", "list ltm pool", "grep a | head -2", true},
		{"show ltm pool p1 detail |wc -l", "show ltm pool p1 detail", "wc -l", true},
		{`modify ltm pool p description "a|b"`, `modify ltm pool p description "a|b"`, "", false},
		{`modify ltm pool p description "a|b" | grep x`, `modify ltm pool p description "a|b"`, " grep x", true},
		{"create ltm rule r { when HTTP_REQUEST { if { 1 || 0 } { log x } } }", "create ltm rule r { when HTTP_REQUEST { if { 1 || 0 } { log x } } }", "", false},
		{"create ltm data-group internal d type string records add { \"a|b\" { } }", "create ltm data-group internal d type string records add { \"a|b\" { } }", "", false},
		{"list ltm rule r | grep -E \"a|b\"", "list ltm rule r", " grep -E \"a|b\"", true},
	} {
		cmd, filters, ok := SplitPipe(c.in)
		if cmd != c.cmd || filters != c.filters || ok != c.ok {
			t.Errorf("SplitPipe(%q) = %q, %q, %v; want %q, %q, %v", c.in, cmd, filters, ok, c.cmd, c.filters, c.ok)
		}
	}
}
