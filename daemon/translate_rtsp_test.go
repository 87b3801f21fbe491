package daemon

import (
	"strings"
	"testing"
	"time"
)

// TestRTSPProfileTranslated: a TCP virtual's rtsp profile reaches the
// dataplane with its idle-timeout and bounds (the built-in's, or the
// profile's own); a virtual without one has none; the settings openltm
// does not act on are kept with a warning.
func TestRTSPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.117.3.11:554 }",
		"create ltm profile rtsp rtsp_short defaults-from rtsp idle-timeout 5 max-header-size 8192",
		"create ltm virtual v_short destination 127.117.3.1:554 pool p profiles replace-all-with { tcp { } rtsp_short { } }",
		"create ltm virtual v_builtin destination 127.117.3.2:554 pool p profiles replace-all-with { tcp { } rtsp { } }",
		"create ltm virtual v_plain destination 127.117.3.3:554 pool p profiles replace-all-with { tcp { } }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not acted on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	out, _ := run(t, s, "modify ltm profile rtsp rtsp_short proxy external rtp-port 9000 unicast-redirect enabled")
	for _, name := range []string{"proxy", "rtp-port", "unicast-redirect"} {
		if !strings.Contains(out, `property "`+name+`" is kept`) {
			t.Errorf("no warning for %s:\n%s", name, out)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if got := dc.Virtuals["/Common/v_short"].RTSP; got == nil || got.Idle != 5*time.Second || got.MaxHeader != 8192 || got.MaxBody != 32768 {
		t.Errorf("v_short: rtsp %+v", got)
	}
	if got := dc.Virtuals["/Common/v_builtin"].RTSP; got == nil || got.Idle != 300*time.Second || got.MaxHeader != 4096 {
		t.Errorf("v_builtin: rtsp %+v", got)
	}
	if got := dc.Virtuals["/Common/v_plain"].RTSP; got != nil {
		t.Errorf("v_plain: rtsp %+v, want none", got)
	}
}

// TestRTSPProfileRefused: an rtsp profile needs a tcp profile and may not
// sit beside an http profile; RTSP_ events need the profile; bad numbers
// are refused.
func TestRTSPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.117.3.11:554 }",
		`create ltm rule r_rtsp { when RTSP_REQUEST { log local0. [RTSP::method] } }`,
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cmd, want string
	}{
		{"create ltm virtual v_udp destination 127.117.3.4:554 ip-protocol udp pool p profiles replace-all-with { udp { } rtsp { } }", "(rtsp) requires a tcp profile"},
		{"create ltm virtual v_http destination 127.117.3.5:554 pool p profiles replace-all-with { tcp { } http { } rtsp { } }", "cannot be used with http profile /Common/http"},
		{"create ltm virtual v_rule destination 127.117.3.6:554 pool p rules { r_rtsp } profiles replace-all-with { tcp { } }", "RTSP"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if out, err := run(t, s, "list ltm virtual "+strings.Fields(c.cmd)[3]); err == "" {
			t.Errorf("the refused virtual exists:\n%s", out)
		}
	}
	if _, err := run(t, s, "create ltm profile rtsp r_bad idle-timeout soon"); err == "" {
		t.Errorf("idle-timeout soon was taken")
	}
	if _, err := run(t, s, "create ltm profile rtsp r_bad2 proxy sideways"); err == "" {
		t.Errorf("proxy sideways was taken")
	}
}
