package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/rules"
)

// TestMRFTransportRules: a transport-config's rules with a peer
// connection's events reach its peers' connections without a warning
// (the engine's translation holds them until it goes in service, a
// standalone one builds them at once); a list with none of those events
// costs nothing; an MQTT router's transport-config's rules reach its
// broker connections too.
func TestMRFTransportRules(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.162.6.11:7000 }",
		"create ltm rule r_peer { when MR_EGRESS { log local0. out } }",
		"create ltm rule r_http { when HTTP_REQUEST { log local0. http } }",
		"create ltm message-routing generic transport-config tc { profiles replace-all-with { tcp { } } rules { r_peer } }",
		"create ltm message-routing generic transport-config tc_none { profiles replace-all-with { tcp { } } rules { r_http } }",
		"create ltm message-routing generic peer gp { pool p transport-config tc }",
		"create ltm message-routing generic peer gn { pool p transport-config tc_none }",
		"create ltm message-routing generic route gr { peers { gp gn } }",
		"create ltm message-routing generic router rt { routes { gr } }",
		"create ltm message-routing generic protocol gm { message-terminator \\n }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, err := run(t, s, "create ltm virtual v destination 127.162.6.1:7000 pool p profiles replace-all-with { tcp { } gm { } rt { } }")
	if err != "" || strings.Contains(out, "kept") {
		t.Fatalf("the virtual: %q %q", out, err)
	}
	dc, _ := Translate(e.schema, e.Config())
	cfg := dc.Virtuals["/Common/v"].MRF
	tc, none := cfg.Transports["/Common/tc"], cfg.Transports["/Common/tc_none"]
	if tc == nil || tc.Rules == nil || tc.RulesKey == "" {
		t.Fatalf("tc: %+v", tc)
	}
	if ir, ok := tc.Rules.(*icapRules); !ok || ir.Program() == nil || !ir.Program().Handles(rules.MREgress) {
		t.Fatalf("tc's program: %#v", tc.Rules)
	}
	if none == nil || none.Rules != nil {
		t.Fatalf("tc_none: %+v", none)
	}
	for _, c := range []string{
		"create ltm message-routing mqtt transport-config tm { profiles replace-all-with { tcp { } } rules { r_peer } }",
		"create ltm message-routing mqtt peer mp { pool p transport-config tm connection-mode per-client }",
		"create ltm message-routing mqtt route mr { peers { mp } }",
		"create ltm message-routing mqtt profile router mrt { defaults-from mqttrouter routes { mr } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, err = run(t, s, "create ltm virtual vm destination 127.162.6.2:1883 pool p profiles replace-all-with { tcp { } mqttsession { } mrt { } }")
	if err != "" || strings.Contains(out, "kept") {
		t.Fatalf("mqtt: %q %q", out, err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if tm := dc.Virtuals["/Common/vm"].MRF.Transports["/Common/tm"]; tm == nil || tm.Rules == nil {
		t.Fatalf("tm: %+v", tm)
	}
}
