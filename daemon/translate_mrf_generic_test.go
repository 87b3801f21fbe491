package daemon

import (
	"strings"
	"testing"
)

// TestMRFGenericUDPAndDisableParser: a UDP virtual takes the generic
// protocol and router profiles (its peers' connections UDP flows, a
// transport-config's udp profile making them so too); disable-parser
// and the router's ignore-client-port are acted on (the stream is not
// cut, nothing is awaited; sessions start ignoring peer ports) without a
// warning; Diameter stays refused on UDP.
func TestMRFGenericUDPAndDisableParser(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.157.3.11:7000 }",
		"create ltm message-routing generic transport-config tc_udp { profiles replace-all-with { udp { } } }",
		"create ltm message-routing generic peer gp { pool p transport-config tc_udp }",
		"create ltm message-routing generic route gr { peers { gp } }",
		"create ltm message-routing generic router rt { routes { gr } }",
		"create ltm message-routing generic protocol gm { message-terminator \\n }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if _, err := run(t, s, "create ltm virtual vudp destination 127.157.3.1:7000 ip-protocol udp pool p profiles replace-all-with { udp { } gm { } rt { } }"); err != "" {
		t.Fatalf("a UDP virtual with the generic profiles: %s", err)
	}
	out, err := run(t, s, "modify ltm message-routing generic protocol gm disable-parser yes")
	if err != "" || strings.Contains(out, "kept") {
		t.Fatalf("disable-parser: %q %q", out, err)
	}
	if out, err := run(t, s, "modify ltm message-routing generic router rt ignore-client-port yes"); err != "" || strings.Contains(out, "act on") {
		t.Fatalf("ignore-client-port: %q %q", out, err)
	}
	if _, err := run(t, s, "create ltm virtual vtcp destination 127.157.3.2:7000 pool p profiles replace-all-with { tcp { } gm { } rt { } }"); err != "" {
		t.Fatal(err)
	}
	dc, _ := Translate(e.schema, e.Config())
	vu, vt := dc.Virtuals["/Common/vudp"], dc.Virtuals["/Common/vtcp"]
	if vu == nil || vu.MRF == nil || !vu.MRF.UDP || vt == nil || vt.MRF == nil {
		t.Fatalf("no generic message routing on the UDP virtual: %+v", vu)
	}
	if p := vt.MRF.Peers["/Common/gp"]; p == nil || p.TC == nil || !p.TC.UDP {
		t.Fatalf("the transport-config's udp profile: %+v", p)
	}
	if !vu.MRF.ConnectBack || vt.MRF.ConnectBack {
		t.Errorf("connect back: udp %t tcp %t, want true and false", vu.MRF.ConnectBack, vt.MRF.ConnectBack)
	}
	if !vt.MRF.IgnorePort || !vu.MRF.IgnorePort {
		t.Fatal("ignore-client-port not on the routers")
	}
	if !vt.MRF.DisableParser || vt.MRF.Term != nil || !vt.MRF.NoResponse {
		t.Fatalf("disable-parser: %+v", vt.MRF)
	}
	for _, c := range []string{
		"create ltm message-routing diameter profile session ds { }",
		"create ltm message-routing diameter profile router dr { }",
	} {
		run(t, s, c)
	}
	if _, err := run(t, s, "create ltm virtual vd destination 127.157.3.3:3868 ip-protocol udp pool p profiles replace-all-with { udp { } ds { } dr { } }"); !strings.Contains(err, "requires a tcp profile") {
		t.Fatalf("diameter over udp: %q", err)
	}
}
