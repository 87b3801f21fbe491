package shell

import (
	"fmt"
	"strings"
	"testing"
)

func TestFeeder(t *testing.T) {
	tests := []struct {
		name  string
		feeds []string
		want  []string // "line:text"
		errs  []string // "line:msg" substrings
		rest  bool
	}{
		{name: "plain lines", feeds: []string{"list ltm pool\n", "show ltm pool\n"},
			want: []string{"1:list ltm pool", "2:show ltm pool"}},
		{name: "semicolons and comments", feeds: []string{"# setup\ncd /Common; ltm\n\n  # more\nexit\n"},
			want: []string{"2:cd /Common", "2:ltm", "5:exit"}},
		{name: "brace block across feeds", feeds: []string{"create ltm rule r {\n", "  when HTTP_REQUEST {\n", "    log local0. hi\n  }\n}\n", "list ltm rule\n"},
			want: []string{"1:create ltm rule r {\n  when HTTP_REQUEST {\n    log local0. hi\n  }\n}", "6:list ltm rule"}},
		{name: "continuation", feeds: []string{"create ltm pool p \\\n", "  monitor http\n"},
			want: []string{"1:create ltm pool p \\\n  monitor http"}},
		{name: "open at the end", feeds: []string{"list ltm pool\n", "create ltm pool p {\n"},
			want: []string{"1:list ltm pool"}, rest: true},
		{name: "stray brace skips its line only", feeds: []string{"list a\n}\nlist b\n"},
			want: []string{"1:list a", "3:list b"}, errs: []string{"2:"}},
		{name: "blank lines before a block keep the count", feeds: []string{"\n\ncreate ltm pool p {\n}\nx\n"},
			want: []string{"3:create ltm pool p {\n}", "5:x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeeder()
			var got, errs []string
			for _, in := range tt.feeds {
				sts, es := f.feed(in)
				for _, s := range sts {
					got = append(got, fmt.Sprintf("%d:%s", s.line, s.text))
				}
				for _, e := range es {
					errs = append(errs, fmt.Sprintf("%d:%s", e.(*splitError).line, e))
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("statements\n got %q\nwant %q", got, tt.want)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %q, want %q", errs, tt.errs)
			}
			for i := range errs {
				if !strings.HasPrefix(errs[i], tt.errs[i]) {
					t.Errorf("error %q, want prefix %q", errs[i], tt.errs[i])
				}
			}
			if f.pending() != tt.rest {
				t.Errorf("pending = %v, want %v", f.pending(), tt.rest)
			}
		})
	}
}

func TestFeederFinish(t *testing.T) {
	f := newFeeder()
	f.feed("list a\n")
	f.feed("\ncreate ltm pool p {\n")
	got := f.finish()
	if len(got) != 1 || got[0].line != 3 || got[0].text != "create ltm pool p {" {
		t.Fatalf("finish = %+v", got)
	}
	if f.pending() || f.finish() != nil {
		t.Fatal("finish left text behind")
	}
}

func TestCurrentStatement(t *testing.T) {
	tests := []struct{ in, want string }{
		{"create ltm po", "create ltm po"},
		{"cd /Common; create ltm ", "create ltm "},
		{"cd /Common;", ""},
		{"create ltm pool p members add { 1.1.1.1:80 { ", "create ltm pool p members add { 1.1.1.1:80 { "},
		{"", ""},
	}
	for _, tt := range tests {
		if got := currentStatement(tt.in); got != tt.want {
			t.Errorf("currentStatement(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
