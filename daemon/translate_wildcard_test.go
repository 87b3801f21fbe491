package daemon

import (
	"strings"
	"testing"
)

// TestWildcardKept: without ltmd --own-namespace, a wildcard virtual
// (on every port, on a port, IPv6) is kept with a warning naming the
// opt-in, and carries no traffic (TestWildcardServed serves them).
func TestWildcardKept(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, dst string }{
		{"create ltm virtual w_any destination 0.0.0.0:any mask any", "/Common/any:0"},
		{"create ltm virtual w_80 destination 0.0.0.0:80 mask any", "/Common/any:80"},
		{"create ltm virtual w_fwd destination 0.0.0.0:any mask any ip-forward", "/Common/any:0"},
		{"create ltm virtual w_6 destination any6.any mask any6", "/Common/any6.0"},
	} {
		out, errText := run(t, s, tc.cmd)
		want := "destination " + tc.dst + " has no address to listen on (a wildcard virtual server takes every connection of ltmd's network namespace: it is served only by an ltmd started with --own-namespace, in a namespace of its own); kept"
		if errText != "" || !strings.Contains(out, want) {
			t.Errorf("%s:\n%q %q\nwant %q", tc.cmd, out, errText, want)
		}
	}
}
