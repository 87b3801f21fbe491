package daemon

import (
	"strings"
	"testing"
)

// TestHTTP3NetworkKept: an http3 virtual with a mask (a network
// virtual on its port) is kept with a warning saying why: its QUIC
// socket would be bound to the network's own address only
// (dataplane.AnyPortUnsupported); the same virtual on one address is
// served, with no warning.
func TestHTTP3NetworkKept(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, errText := run(t, s, "create ltm pool p members add { 127.26.207.11:30080 }"); errText != "" {
		t.Fatal(errText)
	}
	const profiles = " ip-protocol udp pool p profiles replace-all-with { udp { } quic { } http3 { } http { } clientssl { context clientside } }"
	for _, tc := range []struct{ cmd, want string }{
		{"create ltm virtual v_h3net destination 127.26.207.0:30443 mask 255.255.255.0" + profiles,
			"Warning: ltm virtual /Common/v_h3net: an http3 network virtual (mask) is not served yet"},
		{"create ltm virtual v_h3 destination 127.26.207.1:30443" + profiles, ""},
	} {
		out, errText := run(t, s, tc.cmd)
		if errText != "" || !strings.Contains(out, tc.want) || tc.want == "" && out != "" {
			t.Errorf("%s:\n%q %q\nwant %q", tc.cmd, out, errText, tc.want)
		}
	}
}
