package daemon

import (
	"strings"
	"testing"
)

// TestAnyPortKept: what openltm does not serve on every port (an
// ip-forward UDP virtual, an http one) and an ip-forward virtual on a given port (which
// would forward to its own listener) are kept with a warning saying why;
// none of them attaches the steering (TCP and UDP virtuals on every port
// are in dataplane's TestAnyPort and TestAnyPortUDP, in a namespace of
// their own, and the anyport transcripts).
func TestAnyPortKept(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, want string }{
		{"create ltm virtual v_udp destination 127.212.4.1:any ip-protocol udp ip-forward profiles replace-all-with { udp { } }",
			"Warning: ltm virtual /Common/v_udp: destination /Common/127.212.4.1:0 listens on every port: an ip-forward udp virtual on every port is not served yet (tcp is); kept, and it carries no traffic"},
		{"create ltm virtual v_http destination 127.212.4.2:any profiles replace-all-with { tcp { } http { } }",
			"listens on every port: a message-based virtual (http, mblb, sip ...) on every port is not served yet; kept"},
		{"create ltm virtual v_fwd80 destination 127.212.4.3:80 ip-forward",
			"Warning: ltm virtual /Common/v_fwd80: an ip-forward virtual on one port or a port list would forward to its own listener: openltm forwards on every port only; kept"},
	} {
		out, errText := run(t, s, tc.cmd)
		if errText != "" || !strings.Contains(out, tc.want) {
			t.Errorf("%s:\n%q %q\nwant %q", tc.cmd, out, errText, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm virtual v_fwd80"); !strings.Contains(out, "    ip-forward\n") {
		t.Errorf("list: %s", out)
	}
}
