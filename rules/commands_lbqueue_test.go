package rules

import (
	"strings"
	"testing"
)

// TestLBQueueErrors: LB::queue's bad forms and pools are Tcl errors that
// say what is valid.
func TestLBQueueErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"LB::queue", `wrong # args: should be "LB::queue on ?pool? | limit depth|time ?pool? | depth ?one|all? ?pool?"`},
		{"LB::queue queued", `bad LB::queue option "queued": must be on, limit or depth`},
		{"LB::queue limit", "wrong # args"},
		{"LB::queue limit size", "wrong # args"},
		{"LB::queue depth one test_pool extra", "wrong # args"},
		{"LB::queue on nope", `LB::queue: no such pool "nope"`},
	}
	for _, c := range cases {
		_, err := evalIn(t, newFakeConn(), nil, LBQueued, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.expr, err, c.want)
		}
	}
}
