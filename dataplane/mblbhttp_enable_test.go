package dataplane

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestHTTPRuleEnableCancelsDisable: HTTP::enable after HTTP::disable in
// the same HTTP_REQUEST keeps the connection HTTP (the later command
// wins), so the next request is parsed and the rule edits it; without
// the enable the connection is a tunnel after the first answer and the
// next request reaches the member untouched.
func TestHTTPRuleEnableCancelsDisable(t *testing.T) {
	startL7Member(t, "127.0.235.31:80", "M1")
	rule := `when HTTP_REQUEST {
    HTTP::header insert X-LB [HTTP::path]
    if { [HTTP::path] starts_with "/off" } { HTTP::disable }
    if { [HTTP::path] eq "/off-on" } { HTTP::enable }
}`
	for _, tc := range []struct {
		name, vs string
		oc       bool
	}{{"per-connection", "127.0.235.3:80", false}, {"oneconnect", "127.0.235.4:80", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, rule, "127.0.235.31:80"))
			for _, first := range []struct{ path, nextLB string }{{"/off-on", "lb=/next"}, {"/off", "lb= "}} {
				c := dialHTTPVS(t, tc.vs)
				if _, body, err := c.do(httpReq("h", first.path)); err != nil || !strings.Contains(body, "lb="+first.path+" ") {
					t.Fatalf("%s: %q %v", first.path, body, err)
				}
				_, body, err := c.do(httpReq("h", "/next"))
				if err != nil || !strings.Contains(body, first.nextLB) {
					t.Fatalf("after %s: next answered %q (%v), want %q", first.path, body, err, first.nextLB)
				}
			}
		})
	}
}
