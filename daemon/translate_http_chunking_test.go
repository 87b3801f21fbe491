package daemon

import (
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
)

// TestTranslateHTTPChunking: request-chunking and response-chunking
// reach the engine, inherited through defaults-from; the built-in's
// preserve and selective (and BIG-IP 15's sustain) keep the sender's
// framing; a value BIG-IP does not know is refused and changes nothing.
func TestTranslateHTTPChunking(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.74.20.11:80 }",
		"create ltm profile http h_re response-chunking rechunk request-chunking unchunk",
		"create ltm profile http h_child defaults-from h_re request-chunking rechunk",
		"create ltm profile http h_sus response-chunking sustain request-chunking selective",
		"create ltm virtual v_default destination 127.74.20.1:80 pool p profiles replace-all-with { tcp { } http { } }",
		"create ltm virtual v_re destination 127.74.20.2:80 pool p profiles replace-all-with { tcp { } h_re { } }",
		"create ltm virtual v_child destination 127.74.20.3:80 pool p profiles replace-all-with { tcp { } h_child { } }",
		"create ltm virtual v_sus destination 127.74.20.4:80 pool p profiles replace-all-with { tcp { } h_sus { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []string{
		"modify ltm profile http h_re response-chunking chunked",
		"modify ltm profile http h_re request-chunking Unchunk",
		"create ltm profile http h_bad response-chunking none",
	} {
		if _, err := run(t, s, c); err == "" {
			t.Errorf("%s: taken", c)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		vs       string
		req, rsp httpx.Chunking
	}{
		{"v_default", httpx.Sustain, httpx.Sustain},
		{"v_re", httpx.Unchunk, httpx.Rechunk},
		{"v_child", httpx.Rechunk, httpx.Rechunk},
		{"v_sus", httpx.Sustain, httpx.Sustain},
	} {
		o := dc.Virtuals["/Common/"+c.vs].MBLB.Request.HTTP
		if o.RequestChunking != c.req || o.ResponseChunking != c.rsp {
			t.Errorf("%s: request %v response %v, want %v %v", c.vs, o.RequestChunking, o.ResponseChunking, c.req, c.rsp)
		}
	}
}
