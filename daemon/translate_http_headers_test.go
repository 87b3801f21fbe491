package daemon

import (
	"strings"
	"testing"
)

func TestHeaderInsert(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"none", "", ""},
		{"X-Foo: bar", "X-Foo: bar\r\n", ""},
		{`X-A: 1\r\nX-B:2`, "X-A: 1\r\nX-B: 2\r\n", ""},
		{"X-A: 1\r\nX-B: two words", "X-A: 1\r\nX-B: two words\r\n", ""},
		{"no colon", "", `"no colon" is not a header (Name: value)`},
		{"Bad Name: x", "", `"Bad Name: x" is not a header`},
	} {
		got, err := headerInsert(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestHSTSLine(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"{ mode disabled }", "", ""},
		{"{ mode enabled }", "Strict-Transport-Security: max-age=16070400; includeSubDomains\r\n", ""},
		{"{ include-subdomains disabled maximum-age 300 mode enabled preload enabled }", "Strict-Transport-Security: max-age=300; preload\r\n", ""},
		{"{ mode on }", "", `hsts mode "on": must be enabled or disabled`},
		{"{ mode enabled maximum-age forever }", "", `hsts maximum-age "forever"`},
		{"{ mode enabled colour blue }", "", `hsts: "colour" is not mode`},
		{"{ mode }", "", `hsts: "mode" has no value`},
	} {
		got, err := hstsLine(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
