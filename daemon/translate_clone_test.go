package daemon

import (
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestClonePoolsTranslated: clone-pools reaches the dataplane with each
// pool's context, clientside by default, without the warning of what
// openltm keeps only; a pool that does not exist, a context other than
// clientside and serverside, and a clone pool that is the default pool
// are refused and change nothing.
func TestClonePoolsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.73.9.11:80 }",
		"create ltm pool ids members add { 127.73.9.21:80 }",
		"create ltm pool shadow members add { 127.73.9.31:80 }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	for _, c := range []struct {
		props string
		want  []dataplane.ClonePool
	}{
		{"", nil},
		{"clone-pools add { ids }", []dataplane.ClonePool{{Pool: "/Common/ids"}}},
		{"clone-pools add { ids { context clientside } shadow { context serverside } }",
			[]dataplane.ClonePool{{Pool: "/Common/ids"}, {Pool: "/Common/shadow", Server: true}}},
		{"clone-pools replace-all-with { /Common/shadow { context serverside } }",
			[]dataplane.ClonePool{{Pool: "/Common/shadow", Server: true}}},
	} {
		run(t, s, "delete ltm virtual v")
		cmd := "create ltm virtual v destination 127.73.9.1:8080 pool p " + c.props
		out, err := run(t, s, cmd)
		if err != "" || strings.Contains(out, "does not act on") {
			t.Fatalf("%s: %q %s", cmd, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", cmd, skipped)
		}
		if got := dc.Virtuals["/Common/v"].Clone; !slices.Equal(got, c.want) {
			t.Errorf("%q: clone pools %+v, want %+v", c.props, got, c.want)
		}
	}
	before, _ := run(t, s, "list ltm virtual v")
	for _, c := range []struct{ cmd, err string }{
		{"modify ltm virtual v clone-pools add { nosuch }", "01020036:3: The requested pool (/Common/nosuch) was not found."},
		{"modify ltm virtual v clone-pools add { ids { context all } }", `"all" is not a valid value for "context"`},
		{"modify ltm virtual v clone-pools add { p }", "01070734:3: Configuration error: The clone pool (/Common/p) is the default pool of the virtual server (/Common/v)"},
		{"modify ltm virtual v pool shadow", "01070734:3: Configuration error: The clone pool (/Common/shadow) is the default pool of the virtual server (/Common/v)"},
		{"delete ltm pool shadow", "/Common/shadow"},
	} {
		out, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: %q %q, want an error with %q", c.cmd, out, err, c.err)
		}
		if after, _ := run(t, s, "list ltm virtual v"); after != before {
			t.Errorf("%s changed the virtual:\n%s", c.cmd, after)
		}
	}

	// A UDP virtual's clone pools get its datagrams: no warning.
	out, err := run(t, s, "create ltm virtual u destination 127.73.9.2:5353 ip-protocol udp profiles replace-all-with { udp } pool p clone-pools add { ids }")
	if err != "" || out != "" {
		t.Errorf("UDP virtual: %q %q, want no warning", out, err)
	}
	dc, _ := Translate(e.schema, e.Config())
	if got := dc.Virtuals["/Common/u"].Clone; !slices.Equal(got, []dataplane.ClonePool{{Pool: "/Common/ids"}}) {
		t.Errorf("UDP virtual's clone pools %+v", got)
	}
}
