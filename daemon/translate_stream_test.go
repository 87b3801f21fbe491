package daemon

import (
	"strings"
	"testing"
)

// TestStreamChunkSize: a stream profile's chunk-size reaches the HTTP
// engine of the virtuals using it (the built-in's 4096 too); one out of
// 0 to 16 MiB is refused when the profile is made or changed, used or
// not, and changes nothing.
func TestStreamChunkSize(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.15.6.11:80 }",
		"create ltm profile stream links defaults-from stream source http:// target https:// chunk-size 512",
		"create ltm profile stream idle defaults-from stream",
		"create ltm virtual v_links destination 127.15.6.1:80 pool p profiles replace-all-with { tcp { } http { } links { } }",
		"create ltm virtual v_builtin destination 127.15.6.2:80 pool p profiles replace-all-with { tcp { } http { } stream { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]int{"/Common/v_links": 512, "/Common/v_builtin": 4096} {
		v := dc.Virtuals[name]
		if v == nil || v.MBLB == nil || v.MBLB.Request.HTTP.Stream == nil {
			t.Fatalf("%s: no stream options", name)
		}
		if got := v.MBLB.Request.HTTP.Stream.ChunkSize; got != want {
			t.Errorf("%s: chunk-size %d, want %d", name, got, want)
		}
	}
	for _, bad := range []string{"16777217", "-1"} {
		for _, cmd := range []string{
			"modify ltm profile stream links chunk-size " + bad,
			"modify ltm profile stream idle chunk-size " + bad,
			"create ltm profile stream bad defaults-from stream chunk-size " + bad,
		} {
			if _, err := run(t, s, cmd); err == "" || bad != "-1" && !strings.Contains(err, `chunk-size "`+bad+`" must be a number from 0 to 16777216`) {
				t.Errorf("%s: error %q", cmd, err)
			}
		}
	}
	if out, _ := run(t, s, "list ltm profile stream links"); !strings.Contains(out, "chunk-size 512") {
		t.Errorf("links after the refusals:\n%s", out)
	}
	if _, err := run(t, s, "list ltm profile stream bad"); err == "" {
		t.Error("bad was made")
	}
}
