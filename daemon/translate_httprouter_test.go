package daemon

import (
	"strings"
	"testing"
)

// TestHTTPRouterPendingTranslated: the httprouter profile's
// max-pending-bytes and max-pending-messages bound what an HTTP
// virtual's clients hold waiting for members (BIG-IP's defaults from
// the built-in profile, a custom profile's values, none without the
// profile); values past BIG-IP's ranges are refused and change nothing.
func TestHTTPRouterPendingTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool p members add { 127.57.2.11:80 }",
		"create ltm profile httprouter r_small max-pending-bytes 8192 max-pending-messages 8",
		"create ltm virtual v_default destination 127.57.2.1:80 pool p profiles replace-all-with { tcp { } http { } httprouter { } }",
		"create ltm virtual v_small destination 127.57.2.2:80 pool p profiles replace-all-with { tcp { } http { } r_small { } }",
		"create ltm virtual v_none destination 127.57.2.3:80 pool p profiles replace-all-with { tcp { } http { } }",
	)
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		vs          string
		bytes, msgs int64
	}{
		{"/Common/v_default", 32768, 64},
		{"/Common/v_small", 8192, 8},
		{"/Common/v_none", 0, 0},
	} {
		f := dc.Virtuals[c.vs].MBLB.Flow
		if f.PendingBytes != c.bytes || f.PendingMessages != c.msgs {
			t.Errorf("%s: pending bytes %d messages %d, want %d %d", c.vs, f.PendingBytes, f.PendingMessages, c.bytes, c.msgs)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{"modify ltm profile httprouter r_small max-pending-messages 65536", "65536"},
		{"modify ltm profile httprouter r_small max-pending-bytes 4294967296", "4294967296"},
		{"modify ltm profile httprouter r_small max-pending-bytes -1", "-1"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			before := e.Config()
			_, err := run(t, s, c.cmd)
			if err == "" || !strings.Contains(err, c.err) {
				t.Fatalf("%q: error %q, want one naming %q", c.cmd, err, c.err)
			}
			if e.Config() != before {
				t.Errorf("a refused value changed the configuration")
			}
		})
	}
	out, _ := run(t, s, "modify ltm profile httprouter r_small max-pending-bytes 16384 max-pending-messages 16")
	if strings.Contains(out, "does not act on") {
		t.Errorf("max-pending-* are acted on: %q", out)
	}
	if out, _ := run(t, s, "modify ltm profile httprouter r_small ignore-client-port enabled"); !strings.Contains(out, "does not act on") {
		t.Errorf("ignore-client-port is kept only, and no warning says so: %q", out)
	}
}
