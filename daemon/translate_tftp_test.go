package daemon

import (
	"strings"
	"testing"
	"time"
)

// TestTFTPProfileTranslated: a UDP virtual's tftp profile reaches the
// dataplane with its idle-timeout (the built-in's 30 seconds, or the
// profile's own); a virtual without one has none; the logging
// properties kept only warn.
func TestTFTPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.111.3.11:69 }",
		"create ltm profile tftp tftp_short defaults-from tftp idle-timeout 5",
		"create ltm virtual v_short destination 127.111.3.1:69 ip-protocol udp pool p profiles replace-all-with { udp { } tftp_short { } }",
		"create ltm virtual v_builtin destination 127.111.3.2:69 ip-protocol udp pool p profiles replace-all-with { udp { } tftp { } }",
		"create ltm virtual v_plain destination 127.111.3.3:69 ip-protocol udp pool p profiles replace-all-with { udp { } }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not acted on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	out, _ := run(t, s, "modify ltm profile tftp tftp_short log-publisher pub log-profile lp idle-timeout 7")
	for _, name := range []string{"log-publisher", "log-profile"} {
		if !strings.Contains(out, `property "`+name+`" is kept`) {
			t.Errorf("no warning for %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, `"idle-timeout"`) {
		t.Errorf("a warning for idle-timeout:\n%s", out)
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]time.Duration{
		"/Common/v_short":   7 * time.Second,
		"/Common/v_builtin": 30 * time.Second,
		"/Common/v_plain":   -1,
	} {
		got := dc.Virtuals[name].TFTP
		switch {
		case want < 0 && got != nil:
			t.Errorf("%s: tftp %+v, want none", name, got)
		case want >= 0 && (got == nil || got.Idle != want):
			t.Errorf("%s: tftp %+v, want idle %v", name, got, want)
		}
	}
}

// TestTFTPProfileRefused: a tftp profile needs a udp profile and may not
// sit beside a sip or radius profile; a commit that would add either is
// refused with the reason, and a bad idle-timeout is refused.
func TestTFTPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.111.3.11:69 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd, want string
	}{
		{"create ltm virtual v_tcp destination 127.111.3.4:69 pool p profiles replace-all-with { tcp { } tftp { } }", "(tftp) requires a udp profile"},
		{"create ltm virtual v_rad destination 127.111.3.5:69 ip-protocol udp pool p profiles replace-all-with { udp { } tftp { } radiusLB { } }", "cannot be used with radius profile /Common/radiusLB"},
		{"create ltm virtual v_sip destination 127.111.3.6:69 ip-protocol udp pool p profiles replace-all-with { udp { } tftp { } sip { } }", "cannot be used with sip profile /Common/sip"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if out, err := run(t, s, "list ltm virtual "+strings.Fields(c.cmd)[3]); err == "" {
			t.Errorf("the refused virtual exists:\n%s", out)
		}
	}
	if _, err := run(t, s, "create ltm profile tftp t_bad idle-timeout soon"); err == "" {
		t.Errorf("idle-timeout soon was taken")
	}
}
