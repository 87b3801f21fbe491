package grammar

import (
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/Common/p1", "/Common/p1"},
		{"10.1.1.1%2:80", "10.1.1.1%2:80"},
		{"*:*", "*:*"},
		{"", `""`},
		{"two words", `"two words"`},
		{"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n", `"GET / HTTP/1.1\r\nHost: x\r\n\r\n"`},
		{`say "hi"`, `"say \"hi\""`},
		{`ends\`, `"ends\\"`},
		{`a\\b`, `"a\\\b"`},
		{`a\"b`, `"a\\\"b"`},
		{`vnd\.excel`, `"vnd\.excel"`},
		{"#1", `"#1"`},
		{"a#1", "a#1"},
		{"{", `"{"`},
		{"a;b", `"a;b"`},
		{"line1\nline2", "\"line1\nline2\""},
		{"tab\there", "\"tab\there\""},
		{"ünï", "ünï"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		checkQuoteRoundTrip(t, tt.in)
	}
}

// checkQuoteRoundTrip asserts that Parse(Quote(s)) is the single word s.
func checkQuoteRoundTrip(t testing.TB, s string) {
	t.Helper()
	q := Quote(s)
	f, err := Parse("", []byte(q))
	if err != nil {
		t.Fatalf("Parse(Quote(%q) = %s): %v", s, q, err)
	}
	if len(f.Statements) != 1 || len(f.Statements[0].Items) != 1 {
		t.Fatalf("Parse(Quote(%q) = %s) gave %d statements", s, q, len(f.Statements))
	}
	w, ok := f.Statements[0].Items[0].(*Word)
	if !ok || w.Text != s || w.Raw != q || w.Quoted == IsBare(s) {
		t.Fatalf("Parse(Quote(%q) = %s) = %#v", s, q, f.Statements[0].Items[0])
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "a b", `\`, `\"`, "\\\n", "#", "x\\r\\n", "{}", "\"", "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// A configuration is text: a word that is not (control bytes,
		// bytes that are not UTF-8) is refused however it is quoted, and
		// never comes out of a parse to be quoted again.
		if checkText("", []byte(s)) != nil {
			if _, err := Parse("", []byte(Quote(s))); err == nil {
				t.Fatalf("Parse(Quote(%q)) took a word that is not text", s)
			}
			return
		}
		checkQuoteRoundTrip(t, s)
	})
}
