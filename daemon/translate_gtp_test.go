package daemon

import (
	"strings"
	"testing"
)

// TestGTPProfileTranslated: a UDP virtual's gtp profile reaches the
// dataplane with its ingress-max (the built-in's 100, or the
// profile's), which is kept with a warning; the profile on a TCP
// virtual or beside a radius or sip profile is refused
// (TestGTPProfileRefused).
func TestGTPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.122.5.11:2123 }",
		"create ltm virtual v_builtin destination 127.122.5.1:2123 ip-protocol udp pool p profiles replace-all-with { udp { } gtp { } }",
		"create ltm virtual v_plain destination 127.122.5.3:2123 ip-protocol udp pool p profiles replace-all-with { udp { } }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not acted on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	out, _ := run(t, s, "create ltm profile gtp gtp_small defaults-from gtp ingress-max 10")
	if !strings.Contains(out, `property "ingress-max" is kept`) {
		t.Errorf("no warning for ingress-max:\n%s", out)
	}
	if _, err := run(t, s, "create ltm virtual v_small destination 127.122.5.2:2123 ip-protocol udp pool p profiles replace-all-with { udp { } gtp_small { } }"); err != "" {
		t.Fatal(err)
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]int{"/Common/v_builtin": 100, "/Common/v_small": 10, "/Common/v_plain": -1} {
		got := dc.Virtuals[name].GTP
		switch {
		case want < 0 && got != nil:
			t.Errorf("%s: gtp %+v, want none", name, got)
		case want >= 0 && (got == nil || got.IngressMax != want):
			t.Errorf("%s: gtp %+v, want ingress-max %d", name, got, want)
		}
	}
}

// TestGTPProfileRefused: the profile on a TCP virtual, beside a radius
// or sip profile, or with an ingress-max of 0 is refused.
func TestGTPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{"create ltm pool p members add { 127.122.5.11:2123 }", "create ltm profile gtp gtp_small defaults-from gtp"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for c, want := range map[string]string{
		"create ltm virtual v_tcp destination 127.122.5.4:2123 pool p profiles replace-all-with { tcp { } gtp { } }":                              "requires a udp profile",
		"create ltm virtual v_rad destination 127.122.5.5:2123 ip-protocol udp pool p profiles replace-all-with { udp { } gtp { } radiusLB { } }": "cannot be used with radius profile",
		"create ltm virtual v_sip destination 127.122.5.6:2123 ip-protocol udp pool p profiles replace-all-with { udp { } gtp { } sip { } }":      "cannot be used with sip profile",
		"modify ltm profile gtp gtp_small ingress-max 0": "ingress-max",
	} {
		if _, err := run(t, s, c); !strings.Contains(err, want) {
			t.Errorf("%s: error %q, want one saying %q", c, err, want)
		}
	}
}
