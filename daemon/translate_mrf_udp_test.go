package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrfsip"
)

// TestMRFSIPUDPTranslated: a UDP virtual takes the sip session and
// router profiles (its router's peer flows UDP, closed after the udp
// profile's idle-timeout); a transport-config with a udp profile makes
// its peers' connections UDP; honor-via, loop-detection and
// maintenance-mode reach the protocol without a warning.
func TestMRFSIPUDPTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.147.5.11:5060 }",
		"create ltm profile udp u30 { idle-timeout 30 }",
		"create ltm message-routing sip transport-config tc_udp { profiles replace-all-with { u30 { } sipsession { } } }",
		"create ltm message-routing sip peer sp { pool p transport-config tc_udp }",
		"create ltm message-routing sip route sr { request-uri alice peers { sp } }",
		"create ltm message-routing sip profile router rt { defaults-from siprouter routes { sr } }",
		"create ltm virtual vtcp destination 127.147.5.2:5060 pool p profiles replace-all-with { tcp { } sipsession { } rt { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, err := run(t, s, "create ltm message-routing sip profile session ss { defaults-from sipsession honor-via disabled loop-detection enabled maintenance-mode enabled insert-record-route-header enabled }")
	if err != "" || strings.Contains(out, "kept") {
		t.Fatalf("session: %q %q", out, err)
	}
	if _, err := run(t, s, "create ltm virtual vudp destination 127.147.5.1:5060 ip-protocol udp pool p profiles replace-all-with { udp { } ss { } rt { } }"); err != "" {
		t.Fatalf("a UDP virtual with the sip profiles: %s", err)
	}
	dc, _ := Translate(e.schema, e.Config())
	vu, vt := dc.Virtuals["/Common/vudp"], dc.Virtuals["/Common/vtcp"]
	if vu == nil || vu.MRF == nil || vt == nil || vt.MRF == nil {
		t.Fatal("no message routing on the virtuals")
	}
	if !vu.MRF.UDP || vu.MRF.Idle != 60*time.Second || vt.MRF.UDP {
		t.Errorf("udp %t idle %v (tcp virtual's udp %t)", vu.MRF.UDP, vu.MRF.Idle, vt.MRF.UDP)
	}
	sp, ok := vu.MRF.Proto.(*mrfsip.Session)
	if !ok || !sp.UDP || !sp.IgnoreVia || !sp.LoopDetect || !sp.Maintenance || !sp.RecordRoute {
		t.Fatalf("sip session %+v", vu.MRF.Proto)
	}
	p := vt.MRF.Peers["/Common/sp"]
	if p == nil || p.TC == nil || !p.TC.UDP || p.TC.Idle != 30*time.Second {
		t.Fatalf("peer %+v transport %+v", p, p.TC)
	}
	if d, ok := vt.MRF.Proto.(*mrfsip.Session); !ok || d.UDP || d.IgnoreVia || d.LoopDetect || d.Maintenance {
		t.Fatalf("the built-in sipsession %+v", vt.MRF.Proto)
	}
	if !vu.MRF.ConnectBack || !vt.MRF.ConnectBack {
		t.Errorf("connect back: udp %t tcp %t, want both", vu.MRF.ConnectBack, vt.MRF.ConnectBack)
	}
	if out, err := run(t, s, "modify ltm message-routing sip profile session ss do-not-connect-back enabled"); err != "" || strings.Contains(out, "kept") {
		t.Fatalf("do-not-connect-back: %q %q", out, err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if dc.Virtuals["/Common/vudp"].MRF.ConnectBack {
		t.Error("do-not-connect-back enabled still connects back")
	}
	if _, err := run(t, s, "modify ltm virtual vtcp profiles replace-all-with { tcp { } ss { } rt { } }"); err != "" {
		t.Fatal(err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if dc.Virtuals["/Common/vtcp"].MRF.ConnectBack {
		t.Error("do-not-connect-back enabled still connects back over TCP")
	}
}
