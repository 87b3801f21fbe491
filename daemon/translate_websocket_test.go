package daemon

import (
	"testing"

	"github.com/openltm/openltm/dataplane/wsframe"
)

// TestWebSocketProfileTranslated: a virtual's websocket profile reaches
// its HTTP engine with its masking and compression; a virtual without
// one has none.
func TestWebSocketProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.2.11:80 }",
		"create ltm profile websocket ws_keep defaults-from websocket masking preserve compression disabled",
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
		"/Common/v_ws":      {Profile: "/Common/ws_keep", Masking: wsframe.Preserve, NoCompression: true},
		"/Common/v_builtin": {Profile: "/Common/websocket", Masking: wsframe.Unmask},
		"/Common/v_plain":   nil,
	} {
		got := dc.Virtuals[name].MBLB.Request.HTTP.WebSocket
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%s: websocket %+v, want %+v", name, got, want)
		}
	}
}
