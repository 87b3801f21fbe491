package streamfilter

import (
	"strings"
	"testing"
)

type wantSet struct{ search, repl string }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []wantSet
	}{
		{"one set", "@IE@Apache@", []wantSet{{"IE", "Apache"}}},
		{"two sets", "@IE@Apache@ @Windows@Linux@", []wantSet{{"IE", "Apache"}, {"Windows", "Linux"}}},
		{"slash", "/a/b/", []wantSet{{"a", "b"}}},
		{"ampersand", "&a&b&", []wantSet{{"a", "b"}}},
		{"underscore", "_a_b_", []wantSet{{"a", "b"}}},
		{"equals", "=a=b=", []wantSet{{"a", "b"}}},
		{"hyphen", "-a-b-", []wantSet{{"a", "b"}}},
		{"colon", ":a:b:", []wantSet{{"a", "b"}}},
		{"question mark", "?a?b?", []wantSet{{"a", "b"}}},
		{"asterisk", "*a*b*", []wantSet{{"a", "b"}}},
		{"period", ".a.b.", []wantSet{{"a", "b"}}},
		{"comma", ",a,b,", []wantSet{{"a", "b"}}},
		{"sets back to back", "@a@b@@c@d@/e/f/", []wantSet{{"a", "b"}, {"c", "d"}, {"e", "f"}}},
		{"empty replacement", "@debug@@", []wantSet{{"debug", ""}}},
		{"metacharacters", `=http://imageserver-[0-9]{1,4}\.example\.com==`, []wantSet{{`http://imageserver-[0-9]{1,4}\.example\.com`, ""}}},
		{"url", "@http://@https://@", []wantSet{{"http://", "https://"}}},
		{"spaces inside", "@Hello World@Goodbye all@", []wantSet{{"Hello World", "Goodbye all"}}},
		{"mixed delimiters", "@a@b@ /c/d/ =e=f=", []wantSet{{"a", "b"}, {"c", "d"}, {"e", "f"}}},
		{"many spaces", "@a@b@     @c@d@", []wantSet{{"a", "b"}, {"c", "d"}}},
		{"tcl list over lines", "\n  @a@b@\n\t@c@d@\n  ", []wantSet{{"a", "b"}, {"c", "d"}}},
		{"escaped anchors", `@\^\$[$^]@x@`, []wantSet{{`\^\$[$^]`, "x"}}},
		{"class starting with bracket", `@[]^]@x@`, []wantSet{{`[]^]`, "x"}}},
		{"own groups", "@(a)(b)@x@ @(?P<n>c)@y@ @(?P<n>d)@z@", []wantSet{{"(a)(b)", "x"}, {"(?P<n>c)", "y"}, {"(?P<n>d)", "z"}}},
		{"unterminated quote", `@\Qa)b@x@ @c@y@`, []wantSet{{`\Qa)b`, "x"}, {"c", "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if e.String() != tt.in {
				t.Errorf("String() = %q, want %q", e.String(), tt.in)
			}
			if len(e.sets) != len(tt.want) {
				t.Fatalf("got %d sets, want %d", len(e.sets), len(tt.want))
			}
			for i, w := range tt.want {
				if e.sets[i].search != w.search || string(e.sets[i].repl) != w.repl {
					t.Errorf("set %d = %q -> %q, want %q -> %q", i, e.sets[i].search, e.sets[i].repl, w.search, w.repl)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"empty", "", []string{"empty", "offset 0"}},
		{"blank", "   \n", []string{"empty", "offset 4"}},
		{"bad delimiter", "#a#b#", []string{"'#'", "offset 0", "@ / & _ = - : ? * . ,"}},
		{"bad delimiter in second set", "@a@b@ xa@b@", []string{"'x'", "offset 6"}},
		{"brace", "{@a@b@}", []string{"'{'", "offset 0"}},
		{"search not closed", "@abc", []string{"offset 0", "ending its search", "offset 4"}},
		{"replacement not closed", "@a@b", []string{"offset 0", "ending its replacement", "offset 4"}},
		{"second set not closed", "@a@b@ /c/d", []string{"offset 6", "ending its replacement"}},
		{"empty search", "@@b@", []string{"empty search", "offset 1"}},
		{"empty search later", "@a@b@ //x/", []string{"empty search", "offset 7"}},
		{"invalid regexp", "@a(b@c@", []string{"not a valid regular expression", "offset 1", "missing closing )"}},
		{"invalid regexp later", "@a@b@ @[z-a@c@", []string{"not a valid regular expression", "offset 7"}},
		{"trailing garbage", "@a@b@x", []string{"'x'", "offset 5", "whitespace"}},
		{"caret", "@^abc@x@", []string{"^", "offset 1", "not line- or buffer-oriented"}},
		{"dollar", "@abc$@x@", []string{"$", "offset 4", "not line- or buffer-oriented"}},
		{"dollar later", "@a@b@ @x(y|$)@z@", []string{"$", "offset 11"}},
		{"multiline caret", "@(?m)^abc@x@", []string{"^", "offset 5"}},
		{"begin text", `@\Aabc@x@`, []string{`\A`, "offset 1"}},
		{"end text", `@abc\z@x@`, []string{`\z`, "offset 4"}},
		{"word boundary", `@\bfoo@x@`, []string{`\b`, "offset 1"}},
		{"not word boundary", `@fo\B@x@`, []string{`\B`, "offset 3"}},
		{"invalid utf8", "@\xff@x@", []string{"not a valid regular expression", "offset 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.in, e)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse(%q) error %q does not contain %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestParseCache(t *testing.T) {
	a, err := Parse("@cache@hit@")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("@cache@hit@")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("parsing the same text twice compiled it twice")
	}
	// Fill the cache past its cap; it must stay bounded.
	for i := 0; i < cacheCap+10; i++ {
		if _, err := Parse("@x" + strings.Repeat("y", i%50) + "@z@ " + strings.Repeat(" ", i)); err != nil {
			t.Fatal(err)
		}
	}
	cache.RLock()
	n := len(cache.m)
	cache.RUnlock()
	if n > cacheCap {
		t.Errorf("cache holds %d entries, cap %d", n, cacheCap)
	}
}

func TestMaxLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"@http://@https://@", 7},
		{"@ab{1,3}c@x@", 5},
		{"@x.y@x@", 6},
		{"@é@e@", 2},
		{"@(?i)k@x@", 3},
		{"@a+@x@", unbounded},
		{"@a*@x@", unbounded},
		{"@a{2,}@x@", unbounded},
		{"@ab@x@ @c+@y@", unbounded},
		{"@ab@x@ @cde@y@", 3},
		{"@(?:)*@x@ @ab@y@", 2},
		{"@[a-z]{1000}@x@", 1000},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if e.maxLen != tt.want {
			t.Errorf("Parse(%q).maxLen = %d, want %d", tt.in, e.maxLen, tt.want)
		}
	}
}

func TestProfile(t *testing.T) {
	tests := []struct {
		name           string
		source, target string
		nilExpr        bool
		in, want       string
	}{
		{"both none", "none", "none", true, "", ""},
		{"both empty", "", "", true, "", ""},
		{"source empty, target none", "", "none", true, "", ""},
		{"target expression", "none", "@http://@https://@", false, "see http://a and http://b", "see https://a and https://b"},
		{"target expression, empty source", "", "@a@b@ @c@d@", false, "abcd", "bbdd"},
		{"literal", "http://", "https://", false, "x http://y", "x https://y"},
		{"literal dot", "a.b", "X", false, "axb a.b", "axb X"},
		{"literal metacharacters", "(a+)[b]", "Y", false, "aab (a+)[b] (a+)[b]", "aab Y Y"},
		{"literal delimiter chars", "@x@", "/y/", false, "@x@ x", "/y/ x"},
		{"target none deletes", "secret", "none", false, "a secret b", "a  b"},
		{"target empty deletes", "secret", "", false, "a secret b", "a  b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Profile(tt.source, tt.target)
			if err != nil {
				t.Fatalf("Profile(%q, %q): %v", tt.source, tt.target, err)
			}
			if tt.nilExpr {
				if e != nil {
					t.Fatalf("Profile(%q, %q) = %v, want nil", tt.source, tt.target, e)
				}
				return
			}
			if e == nil {
				t.Fatalf("Profile(%q, %q) = nil", tt.source, tt.target)
			}
			f := New(e, 0, nil)
			got := f.Close(f.Write(nil, []byte(tt.in)))
			if string(got) != tt.want {
				t.Errorf("filtered %q = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestProfileErrors(t *testing.T) {
	if _, err := Profile("none", "@a@"); err == nil || !strings.Contains(err.Error(), "offset 0") {
		t.Errorf("Profile with a broken target expression: err = %v", err)
	}
	if _, err := Profile("\xff", "x"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("Profile with an invalid UTF-8 source: err = %v", err)
	}
}

func TestProfileString(t *testing.T) {
	e, err := Profile("a.b", "none")
	if err != nil {
		t.Fatal(err)
	}
	// The same filter in the expression syntax, which Parse reads back.
	if got, want := e.String(), `@a\.b@@`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := Parse(e.String()); err != nil {
		t.Errorf("Parse(%q): %v", e.String(), err)
	}
	if e, err := Profile("a@b/c", "x&y"); err != nil || e.String() != `_a@b/c_x&y_` {
		t.Errorf("Profile with delimiters in source and target: %v %v", e, err)
	}
	var none *Expr
	if none.String() != "" {
		t.Errorf("nil Expr String() = %q", none.String())
	}
}
