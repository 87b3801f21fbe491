package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestJSONProfileTranslated: a virtual's json profile reaches its HTTP
// engine with its maximums (BIG-IP's defaults from the built-in); a
// virtual without one has none.
func TestJSONProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.96.2.11:80 }",
		"create ltm profile json j_small defaults-from json maximum-bytes 1000 maximum-entries 10",
		"create ltm virtual v_small destination 127.96.2.1:80 pool p profiles replace-all-with { tcp { } http { } j_small { } }",
		"create ltm virtual v_builtin destination 127.96.2.2:80 pool p profiles replace-all-with { tcp { } http { } json { } }",
		"create ltm virtual v_plain destination 127.96.2.3:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]*mblb.JSONOptions{
		"/Common/v_small":   {Profile: "/Common/j_small", MaxBytes: 1000, MaxEntries: 10},
		"/Common/v_builtin": {Profile: "/Common/json", MaxBytes: 65536, MaxEntries: 2048},
		"/Common/v_plain":   nil,
	} {
		got := dc.Virtuals[name].MBLB.Request.HTTP.JSON
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%s: json %+v, want %+v", name, got, want)
		}
	}
}

// TestJSONProfileRefused: a maximum out of range is refused when a
// profile is made or changed, as are a json profile without an http
// profile and JSON_ events without a json profile; nothing changes.
func TestJSONProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.96.2.11:80 }",
		"create ltm profile json j_keep defaults-from json maximum-bytes 500",
		"create ltm rule jr { when JSON_RESPONSE { JSON::render } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{"modify ltm profile json j_keep maximum-bytes 0", `maximum-bytes "0" is out of range: 1 to 16777216`},
		{"modify ltm profile json j_keep maximum-bytes 16777217", `maximum-bytes "16777217" is out of range`},
		{"create ltm profile json j_bad defaults-from json maximum-entries 0", `maximum-entries "0" is out of range`},
		{"modify ltm profile json j_keep maximum-non-json-bytes 0", `maximum-non-json-bytes "0" is out of range`},
		{"create ltm virtual v_tcp destination 127.96.2.4:80 pool p profiles replace-all-with { tcp { } j_keep { } }", "requires an http profile"},
		{"create ltm virtual v_rule destination 127.96.2.5:80 pool p profiles replace-all-with { tcp { } http { } } rules { jr }", "JSON_RESPONSE in rule (/Common/jr) requires an associated JSON profile"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm profile json j_keep"); !strings.Contains(out, "maximum-bytes 500") {
		t.Errorf("j_keep after the refusals:\n%s", out)
	}
	for _, l := range []string{"list ltm profile json j_bad", "list ltm virtual v_tcp", "list ltm virtual v_rule"} {
		if _, err := run(t, s, l); err == "" {
			t.Errorf("%s: made", l)
		}
	}
}
