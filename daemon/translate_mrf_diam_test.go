package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfdiam"
)

// TestMRFDiameterSessionSettings: a diameter session profile's watchdog,
// handshake-timeout, persistence, discard-unroutable, dynamic routes,
// rate limits and disconnect-peer-action reach the virtual's router;
// what openltm does not act on is kept with a
// warning; a persist-avp that names no AVP or a negative timer is
// refused and changes nothing.
func TestMRFDiameterSessionSettings(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.148.5.11:3868 }",
		"create ltm message-routing diameter profile session ds { defaults-from diametersession watchdog-timeout 6 max-watchdog-failures 3 handshake-timeout 4 persist-type avp persist-avp User-Name persist-timeout 60 discard-unroutable enabled array-retransmission-result-codes { 3004 3002 } }",
		"create ltm message-routing diameter profile session dc { defaults-from diametersession persist-type custom }",
		"create ltm virtual vdia destination 127.148.5.2:3868 pool p profiles replace-all-with { tcp { } ds { } diameterrouter { } }",
		"create ltm virtual vdef destination 127.148.5.3:3868 pool p profiles replace-all-with { tcp { } diametersession { } diameterrouter { } }",
		"create ltm virtual vcus destination 127.148.5.4:3868 pool p profiles replace-all-with { tcp { } dc { } diameterrouter { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	for _, c := range []struct {
		vs      string
		wd      time.Duration
		fails   int
		hs      time.Duration
		persist mrf.PersistBy
		ttl     time.Duration
		avp     uint32
		respond bool
	}{
		{"/Common/vdia", 6 * time.Second, 3, 4 * time.Second, mrf.PersistAVP, 60 * time.Second, 1, false},
		{"/Common/vdef", 0, 1, 10 * time.Second, mrf.PersistNone, 0, 0, true},
		{"/Common/vcus", 0, 1, 10 * time.Second, mrf.PersistCustom, 180 * time.Second, 0, true},
	} {
		v := dc.Virtuals[c.vs]
		if v == nil || v.MRF == nil {
			t.Fatalf("%s: no message routing", c.vs)
		}
		cfg := v.MRF
		ds := cfg.Proto.(*mrfdiam.Session)
		if cfg.Watchdog != c.wd || cfg.MaxWatchdogFailures != c.fails || cfg.Handshake != c.hs || cfg.Persist != c.persist ||
			cfg.PersistTTL != c.ttl || ds.PersistAVP != c.avp || ds.Respond != c.respond {
			t.Errorf("%s: watchdog %v/%d handshake %v persist %d %v avp %d respond %t", c.vs, cfg.Watchdog, cfg.MaxWatchdogFailures, cfg.Handshake,
				cfg.Persist, cfg.PersistTTL, ds.PersistAVP, ds.Respond)
		}
	}
	if out, err := run(t, s, "modify ltm message-routing diameter profile session ds dynamic-route-insertion enabled dynamic-route-lookup enabled dynamic-route-timeout 30"); err != "" || strings.Contains(out, "kept") {
		t.Errorf("dynamic routes: %q %q", out, err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if ds := dc.Virtuals["/Common/vdia"].MRF.Proto.(*mrfdiam.Session); !ds.DynInsert || !ds.DynLookup || ds.DynTTL != 30*time.Second {
		t.Errorf("dynamic routes: insert %t lookup %t timeout %v", ds.DynInsert, ds.DynLookup, ds.DynTTL)
	}
	if out, err := run(t, s, "modify ltm message-routing diameter profile session ds ingress-major-message-rate-limit 5 ingress-critical-message-rate-limit 9 egress-major-message-rate-limit 7 disconnect-peer-action force-offline"); err != "" || strings.Contains(out, "kept") {
		t.Errorf("rate limits: %q %q", out, err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if ds := dc.Virtuals["/Common/vdia"].MRF.Proto.(*mrfdiam.Session); ds.Ingress != (mrf.RateLimits{Major: 5, Critical: 9}) || ds.Egress != (mrf.RateLimits{Major: 7}) ||
		ds.OnDisconnect != mrf.LeaveOffline {
		t.Errorf("rate limits %v %v, disconnect-peer-action %d", ds.Ingress, ds.Egress, ds.OnDisconnect)
	}
	if _, err := run(t, s, "modify ltm message-routing diameter profile session ds host-ip-address disabled"); err != "" {
		t.Fatal(err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if ds := dc.Virtuals["/Common/vdia"].MRF.Proto.(*mrfdiam.Session); !ds.NoHostIP {
		t.Error("host-ip-address disabled did not reach the router")
	}
	if out, err := run(t, s, "modify ltm message-routing diameter profile session ds loop-detection disabled array-auth-application-id { 4 16777238 }"); err != "" || strings.Contains(out, "kept") {
		t.Errorf("loop-detection: %q %q", out, err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if ds := dc.Virtuals["/Common/vdia"].MRF.Proto.(*mrfdiam.Session); ds.LoopDetect || len(ds.AuthApps) != 2 {
		t.Errorf("loop-detection %t, applications %v", ds.LoopDetect, ds.AuthApps)
	}
	if ds := dc.Virtuals["/Common/vdef"].MRF.Proto.(*mrfdiam.Session); !ds.LoopDetect {
		t.Error("loop-detection is enabled by default")
	}
	out, _ := run(t, s, "modify ltm message-routing diameter profile session ds reset-on-timeout disabled")
	if !strings.Contains(out, "kept") {
		t.Errorf("no warning for reset-on-timeout: %q", out)
	}
	for _, c := range []struct{ cmd, want string }{
		{"modify ltm message-routing diameter profile session ds persist-avp No-Such-AVP", `persist-avp "No-Such-AVP" is not an AVP code`},
		{"modify ltm message-routing diameter profile session ds array-retransmission-result-codes { busy }", `array-retransmission-result-codes "busy" is not a Result-Code`},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	dc, _ = Translate(e.schema, e.Config())
	if v := dc.Virtuals["/Common/vdia"]; v == nil || v.MRF == nil || v.MRF.Proto.(*mrfdiam.Session).PersistAVP != 1 {
		t.Error("the refused persist-avp changed the virtual")
	} else if c := v.MRF.Proto.(*mrfdiam.Session).RetryCodes; len(c) != 2 || c[0] != 3004 || c[1] != 3002 {
		t.Errorf("array-retransmission-result-codes %v, want [3004 3002]", c)
	}
}
