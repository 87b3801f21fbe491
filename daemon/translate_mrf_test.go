package daemon

import "testing"

func TestUnescapeTerm(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`\n`, "\n"}, {`\r\n`, "\r\n"}, {`END`, "END"}, {`\t|`, "\t|"}, {`\\`, `\`},
		{`\x00\x1e`, "\x00\x1e"}, {`\xZZ`, `\xZZ`}, {`a\`, `a\`}, {`\x4`, `\x4`},
	} {
		if got := unescapeTerm(c.in); got != c.want {
			t.Errorf("unescapeTerm(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
