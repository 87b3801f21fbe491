package daemon

import (
	"strings"
	"testing"
)

// TestFallbackStatusCodesProfile: fallback-status-codes reach the engine
// (inherited through defaults-from), are listed as typed, and a code
// that is not one is refused with nothing changed.
func TestFallbackStatusCodesProfile(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.4.2.11:80 }",
		"create ltm profile http h_fb defaults-from http fallback-host http://sorry.example.com/ fallback-status-codes { 500 502-504 }",
		"create ltm profile http h_child defaults-from h_fb",
		"create ltm virtual v_fb destination 127.4.2.1:80 pool p profiles replace-all-with { tcp { } h_child { } }",
		"create ltm virtual v_plain destination 127.4.2.2:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	fs := dc.Virtuals["/Common/v_fb"].MBLB.Request.HTTP.FallbackStatus
	if fs == nil {
		t.Fatal("v_fb: no fallback status codes")
	}
	for code, want := range map[int]bool{500: true, 501: false, 502: true, 504: true, 505: false, 200: false} {
		if fs.Has(code) != want {
			t.Errorf("v_fb: code %d in the set %v, want %v", code, fs.Has(code), want)
		}
	}
	if fs := dc.Virtuals["/Common/v_plain"].MBLB.Request.HTTP.FallbackStatus; fs != nil {
		t.Errorf("v_plain: fallback status codes %v, want none", fs)
	}
	out, _ := run(t, s, "list ltm profile http h_fb fallback-status-codes")
	if !strings.Contains(out, "fallback-status-codes { 500 502-504 }") {
		t.Errorf("list: %q", out)
	}
	for _, c := range []string{
		"modify ltm profile http h_fb fallback-status-codes { 500 5000 }",
		"modify ltm profile http h_fb fallback-status-codes { 504-502 }",
		"create ltm profile http h_bad fallback-status-codes { abc }",
	} {
		if _, err := run(t, s, c); !strings.Contains(err, "fallback-status-codes") {
			t.Errorf("%s: error %q, want one naming fallback-status-codes", c, err)
		}
	}
	if out, _ := run(t, s, "list ltm profile http h_fb fallback-status-codes"); !strings.Contains(out, "{ 500 502-504 }") {
		t.Errorf("after refused modifies: %q", out)
	}
	if _, err := run(t, s, "list ltm profile http h_bad"); err == "" {
		t.Error("h_bad was created")
	}
}
