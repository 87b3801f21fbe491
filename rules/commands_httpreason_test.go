package rules

import (
	"strings"
	"testing"
)

// reasonFake is an HTTP virtual's connection that says why its filter
// went into passthrough or rejected the client.
type reasonFake struct {
	*httpFake
	pt, rj int
}

func (f *reasonFake) HTTPPassthroughReason() int { return f.pt }
func (f *reasonFake) HTTPRejectReason() int      { return f.rj }

func TestHTTPReasonCommands(t *testing.T) {
	cases := []struct {
		pt, rj int
		expr   string
		want   string // or "error: ..."
	}{
		{0, 0, "HTTP::passthrough_reason", "Unknown"},
		{1, 0, "HTTP::passthrough_reason", "iRule"},
		{3, 0, "HTTP::passthrough_reason as_num", "3"},
		{2, 0, "HTTP::passthrough_reason", "Connect"},
		{99, 0, "HTTP::passthrough_reason", "Unknown"},
		{0, 0, "HTTP::reject_reason", ""},
		{0, 1, "HTTP::reject_reason", "Bad Request"},
		{0, 3, "HTTP::reject_reason as_num", "3"},
		{0, 2, "HTTP::reject_reason", "Oversize Client Headers"},
		{0, 0, "HTTP::passthrough_reason as_text", "error: wrong # args"},
		{0, 0, "HTTP::reject_reason as_num x", "error: wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			f := &reasonFake{httpFake: newHTTPFake(t, testRequest, ""), pt: c.pt, rj: c.rj}
			got, err := evalIn(t, f, nil, ClientClosed, c.expr)
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, want)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientClosed, "HTTP::reject_reason"); err == nil {
		t.Error("HTTP::reject_reason without an http profile: no error")
	}
}
