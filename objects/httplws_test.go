package objects

import (
	"strings"
	"testing"
)

func TestParseLWSSeparator(t *testing.T) {
	for _, tc := range []struct{ in, want, bad string }{
		{"none", "", ""},
		{`\r\n\t`, "\r\n\t", ""},
		{`\r\n `, "\r\n ", ""},
		{`\n  `, "\r\n  ", ""},
		{`\r\n`, "", "lws-separator"},
		{`, `, "", "lws-separator"},
		{`\r\nx`, "", "lws-separator"},
		{` `, "", "lws-separator"},
	} {
		got, err := ParseLWSSeparator(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: %q %v, want an error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestFoldHeader(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  string
	}{
		{"X-A: short", 80, "X-A: short"},
		{"X-A: one two three four", 12, "X-A: one two\r\n\tthree four"},
		{"X-A: one two three four five six", 12, "X-A: one two\r\n\tthree four\r\n\tfive six"},
		// no space within the width: the first after it
		{"X-A: abcdefghijkl mn", 8, "X-A: abcdefghijkl\r\n\tmn"},
		// never between the name and its value
		{"X-Long-Name: value", 5, "X-Long-Name: value"},
		{"X-A: nospacesatallinthisvalue", 10, "X-A: nospacesatallinthisvalue"},
	} {
		got := FoldHeader(tc.line, "\r\n\t", tc.width)
		if got != tc.want {
			t.Errorf("%q width %d: %q, want %q", tc.line, tc.width, got, tc.want)
		}
		for i, l := range strings.Split(got, "\r\n") {
			if strings.Contains(l, "\n") || i > 0 && !strings.HasPrefix(l, "\t") {
				t.Errorf("%q: line %q is not a continuation", tc.line, l)
			}
		}
	}
	if got := FoldHeader("X-A: one two three", "", 5); got != "X-A: one two three" {
		t.Errorf("no separator folded: %q", got)
	}
}
