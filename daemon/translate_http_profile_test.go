package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
)

func TestEnforcementLimits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want httpLimits
		bad  string
	}{
		{"", httpLimits{32768, 64, 0}, ""},
		{"{ max-header-count 10 max-requests 100 }", httpLimits{32768, 10, 100}, ""},
		{"{ known-methods { CONNECT GET max-header-size } max-header-size 8192 pipeline allow }", httpLimits{8192, 64, 0}, ""},
	} {
		got, err := enforcementLimits(blockValue(t, "ltm profile http", "enforcement", tc.in))
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: error %v, want one naming %s", tc.in, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestTranslateHTTPProfile: the http profile's settings reach the engine,
// and one it cannot use keeps the virtual without traffic, saying why.
func TestTranslateHTTPProfile(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.107.11:80 }",
		"create ltm profile http h_edge defaults-from http accept-xff enabled xff-alternative-names { True-Client-IP } server-agent-name edge redirect-rewrite nodes fallback-host http://sorry.example.com/ enforcement { max-header-count 20 max-requests 50 }",
		"create ltm profile http h_quiet defaults-from h_edge server-agent-name none",
		"create ltm virtual v_edge destination 127.0.107.1:80 pool p profiles replace-all-with { tcp { } h_edge { } }",
		"create ltm virtual v_quiet destination 127.0.107.2:80 pool p profiles replace-all-with { tcp { } h_quiet { } }",
		"create ltm virtual v_default destination 127.0.107.3:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	opts := func(n string) mblb.HTTPOptions { return dc.Virtuals["/Common/"+n].MBLB.Request.HTTP }
	edge := opts("v_edge")
	if !edge.AcceptXFF || strings.Join(edge.XFFNames, ",") != "true-client-ip,x-forwarded-for" || edge.ServerAgent != "edge" ||
		edge.RedirectRewrite != httpx.RewriteNodes || edge.Scheme != "http" || edge.Fallback != "http://sorry.example.com/" ||
		edge.MaxHeaderCount != 20 || edge.MaxRequests != 50 || edge.MaxHeaderSize != 32768 {
		t.Errorf("v_edge: %+v", edge)
	}
	if q := opts("v_quiet"); q.ServerAgent != "" || q.MaxHeaderCount != 20 {
		t.Errorf("v_quiet (inherits h_edge, no server name): %+v", q)
	}
	d := opts("v_default")
	if d.AcceptXFF || d.ServerAgent != "BigIP" || d.RedirectRewrite != httpx.RewriteNone || d.MaxHeaderCount != 64 || d.MaxRequests != 0 || d.Fallback != "" {
		t.Errorf("v_default: %+v", d)
	}
	if _, err := run(t, s, "modify ltm profile http h_edge enforcement { max-header-count none }"); err != "" {
		t.Fatal(err)
	}
	_, skipped = Translate(e.schema, e.Config())
	if len(skipped) != 2 || !strings.Contains(skipped[0], "max-header-count") {
		t.Fatalf("a bad limit: skipped %v", skipped)
	}
}
