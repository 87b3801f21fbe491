package daemon

import (
	"strings"
	"testing"
)

// TestHTTP2MembersPreserveStrict: a virtual's source-port
// preserve-strict with an http2 profile on its server side is refused
// at commit, naming the virtual, and nothing changes; an ltm snat's
// preserve-strict, which such a virtual's member connections do not
// keep, is warned of on the virtual by name.
func TestHTTP2MembersPreserveStrict(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool p members add { 127.247.200.11:27010 }",
		"create ltm profile http2 h2_members { }",
		"create ltm virtual v_h2 destination 127.247.200.1:27001 pool p profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } }",
		"create ltm virtual v_h1 destination 127.247.200.2:27002 pool p profiles replace-all-with { tcp { } http { } }",
	)
	for _, c := range []string{
		"modify ltm virtual v_h2 source-port preserve-strict",
		"create ltm virtual v_new destination 127.247.200.3:27003 pool p source-port preserve-strict profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } }",
	} {
		before := e.Config().Text()
		_, err := run(t, s, c)
		if !strings.Contains(err, "/Common/v_") || !strings.Contains(err, "source-port preserve-strict cannot be kept with profile /Common/h2_members") {
			t.Errorf("%s: %q, want a refusal naming the virtual", c, err)
		}
		if testing.Verbose() {
			t.Log(err)
		}
		if e.Config().Text() != before {
			t.Errorf("%s: the configuration changed", c)
		}
	}
	// Without the server-side http2 profile, and change with it, it is
	// taken and acted on (translate_srcport.go): no warning.
	for _, c := range []string{"modify ltm virtual v_h1 source-port preserve-strict", "modify ltm virtual v_h2 source-port change"} {
		out, errs := run(t, s, c)
		if errs != "" {
			t.Fatalf("%s: %s", c, errs)
		}
		if strings.Contains(out, "is kept but not acted on") {
			t.Errorf("%s: warned that it is not acted on: %q", c, out)
		}
	}

	out, errs := run(t, s, "create ltm snat s_strict origins add { 127.247.201.0/24 } translation 127.247.200.130 source-port preserve-strict")
	if errs != "" {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "ltm virtual /Common/v_h2: the member connections of profile /Common/h2_members (http2) take any port on the translation address of ltm snat /Common/s_strict") {
		t.Errorf("no warning naming the virtual: %q", out)
	}
	if strings.Contains(out, "ltm virtual /Common/v_h1:") {
		t.Errorf("a warning for the HTTP/1.1 virtual: %q", out)
	}
	// A new virtual is warned of; one with its own translation, which
	// replaces the ltm snats, is not.
	for _, c := range []struct {
		cmd  string
		warn bool
	}{
		{"create ltm virtual v_h2b destination 127.247.200.4:27004 pool p profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } }", true},
		{"create ltm virtual v_h2c destination 127.247.200.5:27005 pool p source-address-translation { type automap } profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } }", false},
	} {
		out, errs := run(t, s, c.cmd)
		if errs != "" {
			t.Fatal(errs)
		}
		if got := strings.Contains(out, "ltm snat /Common/s_strict, whose source-port preserve-strict they do not keep"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %q", c.cmd, got, c.warn, out)
		}
	}
}
