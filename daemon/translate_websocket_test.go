package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/wsframe"
)

// TestWebSocketProfileTranslated: a virtual's websocket profile reaches
// its HTTP engine with its masking, compression, window-bits and
// no-delay; a virtual without one has none.
func TestWebSocketProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.2.11:80 }",
		"create ltm profile websocket ws_keep defaults-from websocket masking preserve compression disabled window-bits 12 no-delay disabled",
		"create ltm virtual v_ws destination 127.47.2.1:80 pool p profiles replace-all-with { tcp { } http { } ws_keep { } }",
		"create ltm virtual v_builtin destination 127.47.2.2:80 pool p profiles replace-all-with { tcp { } http { } websocket { } }",
		"create ltm virtual v_plain destination 127.47.2.3:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]*wsframe.Options{
		"/Common/v_ws":      {Profile: "/Common/ws_keep", Masking: wsframe.Preserve, NoCompression: true, WindowBits: 12, Nagle: true},
		"/Common/v_builtin": {Profile: "/Common/websocket", Masking: wsframe.Unmask, WindowBits: 10},
		"/Common/v_plain":   nil,
	} {
		got := dc.Virtuals[name].MBLB.Request.HTTP.WebSocket
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%s: websocket %+v, want %+v", name, got, want)
		}
	}
}

// TestWebSocketWindowBitsRefused: a window-bits out of 8 to 15 is refused
// when a profile is made or changed, whether or not a virtual uses it,
// and changes nothing.
func TestWebSocketWindowBitsRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.15.3.11:80 }",
		"create ltm profile websocket ws_keep defaults-from websocket window-bits 12",
		"create ltm profile websocket ws_idle defaults-from websocket",
		"create ltm virtual v_ws destination 127.15.3.1:80 pool p profiles replace-all-with { tcp { } http { } ws_keep { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, bad := range []string{"7", "16", "0"} {
		for _, cmd := range []string{
			"create ltm profile websocket ws_bad defaults-from websocket window-bits " + bad,
			"modify ltm profile websocket ws_keep window-bits " + bad,
			"modify ltm profile websocket ws_idle window-bits " + bad,
		} {
			if _, err := run(t, s, cmd); !strings.Contains(err, `window-bits "`+bad+`" is out of range: 8 to 15`) {
				t.Errorf("%s: error %q", cmd, err)
			}
		}
	}
	if out, _ := run(t, s, "list ltm profile websocket ws_keep"); !strings.Contains(out, "window-bits 12") {
		t.Errorf("ws_keep after the refusals:\n%s", out)
	}
	if _, err := run(t, s, "list ltm profile websocket ws_bad"); err == "" {
		t.Error("ws_bad was made")
	}
}
