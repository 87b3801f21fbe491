package daemon

import (
	"slices"
	"testing"

	"github.com/openltm/openltm/rules"
)

// TestProfileRefsTranslated: a virtual's profiles reach the dataplane by
// iRules type and full path, for PROFILE::exists.
func TestProfileRefsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.11.3.11:80 }",
		"create ltm profile http web_http",
		"create ltm profile one-connect oc",
		"create ltm virtual v destination 127.11.3.1:80 pool p profiles replace-all-with { tcp web_http oc }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	want := []rules.ProfileRef{{Type: "tcp", Name: "/Common/tcp"}, {Type: "http", Name: "/Common/web_http"}, {Type: "oneconnect", Name: "/Common/oc"}}
	got := dc.Virtuals["/Common/v"].Profiles
	slices.SortFunc(got, func(a, b rules.ProfileRef) int { return slices.Index(want, a) - slices.Index(want, b) })
	if !slices.Equal(got, want) {
		t.Errorf("profiles %+v, want %+v", got, want)
	}
}
