package daemon

import (
	"strings"
	"testing"
)

// TestSNATRuleCountsTranslation: a rule's snat of an address that has an
// ltm snat-translation without a limit or idle timeout is counted in
// show ltm snat-translation's Total Connections, as a SNAT's or
// snatpool's would be; a rule's snat of an address without one is
// served alike and not listed (BIG-IP makes snat-translation objects
// from the configuration, not from a rule's run-time choices).
func TestSNATRuleCountsTranslation(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.255.140.11:30211", fromHost, false)
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p members add { 127.255.140.11:30211 }",
		"create ltm snat-translation 127.255.140.100 address 127.255.140.100",
		"create ltm rule r_obj { when CLIENT_ACCEPTED { snat 127.255.140.100 } }",
		"create ltm rule r_bare { when CLIENT_ACCEPTED { snat 127.255.140.101 } }",
		"create ltm virtual v_obj destination 127.255.140.1:30210 pool p rules { r_obj } profiles replace-all-with { tcp { } }",
		"create ltm virtual v_bare destination 127.255.140.1:30212 pool p rules { r_bare } profiles replace-all-with { tcp { } }",
	)
	for _, tc := range []struct{ vip, want string }{
		{"127.255.140.1:30210", "127.255.140.100"},
		{"127.255.140.1:30210", "127.255.140.100"},
		{"127.255.140.1:30212", "127.255.140.101"},
	} {
		got, c := dialFrom(t, "127.255.141.5", 0, tc.vip)
		if c != nil {
			c.Close()
		}
		if got != tc.want {
			t.Fatalf("%s: the member saw %q, want %s", tc.vip, got, tc.want)
		}
	}
	out, _ := run(t, s, "show ltm snat-translation 127.255.140.100")
	if !regexpMatch(`Total Connections\s+2\b`, out) {
		t.Errorf("show ltm snat-translation does not count the rule's two connections:\n%s", out)
	}
	if out, _ := run(t, s, "show ltm snat-translation"); strings.Contains(out, "127.255.140.101") || !strings.Contains(out, "127.255.140.100") {
		t.Errorf("show ltm snat-translation: want the object's address listed and the rule's bare address not:\n%s", out)
	}
}
