package daemon

import (
	"strings"
	"testing"
)

// TestMemberLoggingTranslated: a pool member's logging reaches the
// dataplane, without the warning of what openltm keeps only.
func TestMemberLoggingTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	out, err := run(t, s, "create ltm pool p members add { 127.11.8.11:80 { logging enabled } 127.11.8.12:80 }")
	if err != "" || strings.Contains(out, "not act") {
		t.Fatalf("%q %s", out, err)
	}
	dc, _ := Translate(e.schema, e.Config())
	ms := dc.Pools["/Common/p"].Members
	if len(ms) != 2 || !ms[0].Logging || ms[1].Logging {
		t.Errorf("members %+v, want logging on the first only", ms)
	}
}
