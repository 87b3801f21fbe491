package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfdiam"
	"github.com/openltm/openltm/dataplane/mrfsip"
)

// TestMRFProtocolsTranslated: a virtual's sip and diameter session and
// router profiles give its router their protocol, routes (their fields,
// a route of another virtual left out) and peers; settings openltm does
// not act on are kept with a warning; the refusals (a session without
// its router, two protocols, no tcp, GENERICMESSAGE_ events beside a
// SIP session) change nothing.
func TestMRFProtocolsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.138.5.11:5060 }",
		"create ltm message-routing sip peer sp { pool p }",
		"create ltm message-routing sip route sr { request-uri alice from-uri sip:bob@example.com peers { sp } }",
		"create ltm virtual vdef destination 127.138.5.3:5060 pool p profiles replace-all-with { tcp { } sipsession { } siprouter { } }",
		"create ltm message-routing sip route sr_other { to-uri carol peers { sp } virtual-server vdef }",
		"create ltm message-routing sip profile session ss { defaults-from sipsession insert-via-header disabled custom-via \"SIP/2.0/TCP sbc.example:5060\" }",
		"create ltm message-routing sip profile router sr_rt { defaults-from siprouter routes { sr sr_other } }",
		"create ltm message-routing diameter peer dp { pool p }",
		"create ltm message-routing diameter route dr { destination-realm realm-a application-id 4 peers { dp } }",
		"create ltm message-routing diameter profile session ds { defaults-from diametersession origin-host lb.example origin-realm lb-realm array-auth-application-id { 4 16777238 } }",
		"create ltm message-routing diameter profile router dr_rt { defaults-from diameterrouter routes { dr } }",
		"create ltm virtual vsip destination 127.138.5.1:5060 pool p profiles replace-all-with { tcp { } ss { } sr_rt { } }",
		"create ltm virtual vdia destination 127.138.5.2:3868 pool p profiles replace-all-with { tcp { } ds { } dr_rt { } }",
		"create ltm rule gm { when GENERICMESSAGE_INGRESS { log local0. x } }",
		"create ltm rule mr { when MR_INGRESS { log local0. [MR::protocol] } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	vs, vd, vdef := dc.Virtuals["/Common/vsip"], dc.Virtuals["/Common/vdia"], dc.Virtuals["/Common/vdef"]
	if vs == nil || vs.MRF == nil || vd == nil || vd.MRF == nil || vdef == nil || vdef.MRF == nil {
		t.Fatal("no message routing on the virtuals")
	}
	sp, ok := vs.MRF.Proto.(*mrfsip.Session)
	if !ok || sp.InsertVia || sp.CustomVia != "SIP/2.0/TCP sbc.example:5060" || !sp.MaxForwards {
		t.Fatalf("sip session %+v", vs.MRF.Proto)
	}
	if len(vs.MRF.Routes) != 1 || vs.MRF.Routes[0].Keys[mrfsip.KeyRequest] != "alice" || vs.MRF.Routes[0].Keys[mrfsip.KeyFrom] != "sip:bob@example.com" ||
		vs.MRF.Routes[0].Keys[mrfsip.KeyTo] != "" || len(vs.MRF.Routes[0].Peers) != 1 || vs.MRF.Routes[0].Peers[0].Pool != "/Common/p" {
		t.Fatalf("sip routes %+v", vs.MRF.Routes)
	}
	if d, ok := vdef.MRF.Proto.(*mrfsip.Session); !ok || !d.InsertVia || d.RecordRoute || d.Respond {
		t.Fatalf("the built-in sipsession %+v", vdef.MRF.Proto)
	}
	dp, ok := vd.MRF.Proto.(*mrfdiam.Session)
	if !ok || dp.OriginHost != "lb.example" || dp.OriginRealm != "lb-realm" || dp.VendorID != 3375 || !dp.Respond || len(dp.AuthApps) != 2 || dp.AuthApps[1] != 16777238 {
		t.Fatalf("diameter session %+v", vd.MRF.Proto)
	}
	if r := vd.MRF.Routes; len(r) != 1 || r[0].Keys[mrfdiam.KeyDestRealm] != "realm-a" || r[0].Keys[mrfdiam.KeyApp] != "4" {
		t.Fatalf("diameter routes %+v", r)
	}
	out, _ := run(t, s, "modify ltm message-routing sip profile session ss honor-route-header enabled honor-route-mode strict passthru-mode enabled loop-detection-mode Strict")
	if strings.Contains(out, "kept") {
		t.Errorf("a warning for the route, passthru and loop modes: %q", out)
	}
	dc, _ = Translate(e.schema, e.Config())
	if sp, ok := dc.Virtuals["/Common/vsip"].MRF.Proto.(*mrfsip.Session); !ok || !sp.HonorRoute || !sp.StrictRoute || !sp.Passthru || !sp.LoopStrict {
		t.Errorf("sip session %+v", dc.Virtuals["/Common/vsip"].MRF.Proto)
	}
	out, _ = run(t, s, "modify ltm message-routing sip profile session ss enable-sip-firewall yes")
	if !strings.Contains(out, "enable-sip-firewall yes is kept") {
		t.Errorf("no warning for enable-sip-firewall: %q", out)
	}
	if _, err := run(t, s, "modify ltm virtual vsip rules { mr }"); err != "" {
		t.Errorf("MR_INGRESS on a SIP virtual: %s", err)
	}
	for _, c := range []struct{ cmd, want string }{
		{"create ltm virtual bad1 destination 127.138.5.4:5060 pool p profiles replace-all-with { tcp { } ss { } }", "requires a sip router profile"},
		{"create ltm virtual bad2 destination 127.138.5.5:5060 pool p profiles replace-all-with { tcp { } ss { } dr_rt { } }", "dr_rt (diameter) cannot be used with sip profile /Common/ss"},
		{"create ltm virtual bad3 destination 127.138.5.6:3868 ip-protocol udp pool p profiles replace-all-with { udp { } ds { } dr_rt { } }", "requires a tcp profile"},
		{"create ltm virtual bad4 destination 127.138.5.7:5060 pool p profiles replace-all-with { tcp { } ss { } sr_rt { } } rules { gm }", "requires an associated GENERICMESSAGE profile"},
		{"create ltm virtual bad5 destination 127.138.5.8:5060 pool p profiles replace-all-with { tcp { } sip { } ss { } sr_rt { } }", "cannot be used with sip profile /Common/sip"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "bad") {
		t.Errorf("a refused virtual was kept:\n%s", out)
	}
}

// TestSIPPersistenceTranslated: the sip session profile's persistence
// block gives the router its persist-key and persist-timeout; none, or
// a word openltm does not know (kept with a warning), persists nothing.
func TestSIPPersistenceTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.144.5.11:5060 }",
		"create ltm message-routing sip profile session ss { defaults-from sipsession }",
		"create ltm virtual v destination 127.144.5.1:5060 pool p profiles replace-all-with { tcp { } ss { } siprouter { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct {
		block string
		by    mrf.PersistBy
		ttl   time.Duration
		warn  string
	}{
		{"{ persist-type session persist-key Call-ID persist-timeout 60 }", mrf.PersistCallID, time.Minute, ""},
		{"{ persist-type session persist-key Src-Addr }", mrf.PersistSrcAddr, 0, ""},
		{"{ persist-type session persist-key Custom persist-timeout 30 }", mrf.PersistCustom, 30 * time.Second, ""},
		{"{ persist-type session }", mrf.PersistCallID, 0, ""},
		{"{ persist-type none persist-key Call-ID }", mrf.PersistNone, 0, ""},
		{"{ persist-type session persist-key To-Tag }", mrf.PersistNone, 0, "persist-key To-Tag is kept"},
	} {
		out, err := run(t, s, "modify ltm message-routing sip profile session ss persistence "+tc.block)
		if err != "" {
			t.Fatalf("%s: %s", tc.block, err)
		}
		if tc.warn != "" && !strings.Contains(out, tc.warn) {
			t.Errorf("%s: no warning %q in %q", tc.block, tc.warn, out)
		}
		dc, _ := Translate(e.schema, e.Config())
		v := dc.Virtuals["/Common/v"]
		if v == nil || v.MRF == nil {
			t.Fatal("no message routing on the virtual")
		}
		if v.MRF.Persist != tc.by || v.MRF.PersistTTL != tc.ttl {
			t.Errorf("%s: persistence %d %v, want %d %v", tc.block, v.MRF.Persist, v.MRF.PersistTTL, tc.by, tc.ttl)
		}
	}
}

// TestDiameterRetransmissionTranslated: retransmission-action and
// max-retransmissions reach the virtual's router, with no warning.
func TestDiameterRetransmissionTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.144.5.12:3868 }",
		"create ltm message-routing diameter profile session ds { defaults-from diametersession }",
		"create ltm virtual v destination 127.144.5.2:3868 pool p profiles replace-all-with { tcp { } ds { } diameterrouter { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct {
		set  string
		want mrf.LostAction
		max  int
	}{
		{"retransmission-action retransmit max-retransmissions 3", mrf.LostRetransmit, 3},
		{"retransmission-action busy", mrf.LostBusy, 3},
		{"retransmission-action unable", mrf.LostUnable, 3},
		{"retransmission-action disabled max-retransmissions 1", mrf.LostFail, 1},
	} {
		out, err := run(t, s, "modify ltm message-routing diameter profile session ds "+tc.set)
		if err != "" || strings.Contains(out, "kept") {
			t.Fatalf("%s: %q %s", tc.set, out, err)
		}
		dc, _ := Translate(e.schema, e.Config())
		if v := dc.Virtuals["/Common/v"]; v == nil || v.MRF == nil || v.MRF.OnLost != tc.want || v.MRF.MaxRetransmit != tc.max {
			t.Fatalf("%s: router %+v", tc.set, v)
		}
	}
}
