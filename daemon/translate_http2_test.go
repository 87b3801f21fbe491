package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/objects"
)

// TestHTTP2ProfileTranslated: an http2 profile's properties, its own and
// the built-in's, reach the virtual; a profile the gateway cannot apply
// is refused when it is made or changed.
func TestHTTP2ProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.1.11:80 }",
		"create ltm profile http2 h2_edge activation-modes replace-all-with { always } concurrent-streams-per-connection 64 connection-idle-timeout 30 header-table-size 8192 receive-window 64 insert-header enabled insert-header-name X-Via-H2 enforce-tls-requirements disabled frame-size 4096 write-size 8192 include-content-length enabled",
		"create ltm virtual v_edge destination 127.47.1.1:80 pool p profiles replace-all-with { tcp { } http { } h2_edge { } }",
		"create ltm virtual v_plain destination 127.47.1.2:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if h := dc.Virtuals["/Common/v_plain"].HTTP2; h != nil {
		t.Errorf("v_plain has HTTP2 %+v", h)
	}
	h := dc.Virtuals["/Common/v_edge"].HTTP2
	if h == nil {
		t.Fatal("v_edge: no HTTP2")
	}
	want := h2gw.Config{Profile: "/Common/h2_edge", MaxConcurrentStreams: 64, IdleTimeout: 30 * time.Second,
		HeaderTableSize: 8192, ReceiveWindow: 64 << 10, InsertHeader: "X-Via-H2", PermitProhibitedCiphers: true,
		FrameSize: 4096, WriteSize: 8192}
	got := h.Config
	got.Stats = nil
	if got != want || h.ALPN || !h.Always {
		t.Errorf("v_edge: %+v ALPN %v Always %v\nwant %+v, always (cleartext)", got, h.ALPN, h.Always, want)
	}
	if h.Stats == nil {
		t.Error("v_edge: no counters for the profile")
	}

	for _, c := range []struct{ cmd, err string }{
		{"modify ltm profile http2 h2_edge receive-window 8", `receive-window "8" must be a number from 16 to 128`},
		{"modify ltm profile http2 h2_edge concurrent-streams-per-connection 0", `concurrent-streams-per-connection "0" must be a number from 1 to 256`},
		{"modify ltm profile http2 h2_edge header-table-size 70000", `header-table-size "70000" must be a number from 0 to 65535`},
		{"modify ltm profile http2 h2_edge frame-size 512", `frame-size "512" must be a number from 1024 to 16384`},
		{"modify ltm profile http2 h2_edge write-size 40000", `write-size "40000" must be a number from 2048 to 32768`},
		{"modify ltm profile http2 h2_edge activation-modes replace-all-with { alpn always }", "activation-modes alpn and always are mutually exclusive"},
		{"modify ltm profile http2 h2_edge insert-header-name none", "insert-header is enabled without an insert-header-name"},
		{"modify ltm profile http2 h2_edge activation-modes replace-all-with { npn }", `activation-modes "npn" is not alpn or always`},
		{"modify ltm virtual v_plain profiles replace-all-with { tcp { } h2_edge { } }", "requires an http profile on the virtual server (/Common/v_plain)"},
		{"modify ltm virtual v_plain profiles replace-all-with { tcp { } http { } http2 { } }", "activation-modes alpn requires a client-ssl profile"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			before := e.Config()
			if _, err := run(t, s, c.cmd); err != "" {
				t.Fatal(err)
			}
			_, skipped := Translate(e.schema, e.Config())
			if !strings.Contains(strings.Join(skipped, "\n"), c.err) {
				t.Errorf("skipped %q, want one with %q", skipped, c.err)
			}
			if _, err := e.Replace(context.Background(), "admin", "undo", CommitOptions{}, func(*objects.Config) (*objects.Config, error) { return before, nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}
