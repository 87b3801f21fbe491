package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestRateLimitsTranslated: rate-limit on virtual servers, members and
// nodes reaches the dataplane with the virtual's mode and masks, without
// the warning of what openltm keeps only; disabled and 0 are none.
func TestRateLimitsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm node n1 address 127.47.9.11 rate-limit 7",
		"create ltm pool p members add { n1:80 { rate-limit 3 } 127.47.9.12:80 }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "does not act on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	for _, c := range []struct {
		props string
		limit int
		mode  dataplane.RateLimitMode
	}{
		{"", 0, dataplane.RateLimitMode{}},
		{"rate-limit disabled rate-limit-mode source", 0, dataplane.RateLimitMode{}},
		{"rate-limit 0", 0, dataplane.RateLimitMode{}},
		{"rate-limit 100", 100, dataplane.RateLimitMode{Object: true}},
		{"rate-limit 5 rate-limit-mode object-source rate-limit-src-mask 24", 5, dataplane.RateLimitMode{Object: true, BySource: true, SrcMask: 24}},
		{"rate-limit 5 rate-limit-mode destination rate-limit-dst-mask 16", 5, dataplane.RateLimitMode{ByDest: true, DstMask: 16}},
		{"rate-limit 9 rate-limit-mode source-destination", 9, dataplane.RateLimitMode{BySource: true, ByDest: true}},
	} {
		run(t, s, "delete ltm virtual v")
		cmd := "create ltm virtual v destination 127.47.9.1:80 pool p " + c.props
		out, err := run(t, s, cmd)
		if err != "" || strings.Contains(out, "does not act on") {
			t.Fatalf("%s: %s %s", cmd, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("skipped %v", skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if v.RateLimit != c.limit || v.RateLimitMode != c.mode {
			t.Errorf("%q: rate-limit %d %+v, want %d %+v", c.props, v.RateLimit, v.RateLimitMode, c.limit, c.mode)
		}
		if c.props == "" {
			p := dc.Pools["/Common/p"]
			if p.Members[0].RateLimit != 3 || p.Members[1].RateLimit != 0 || dc.Nodes["/Common/n1"].RateLimit != 7 {
				t.Errorf("members %d and %d, node %d; want 3, 0 and 7", p.Members[0].RateLimit, p.Members[1].RateLimit, dc.Nodes["/Common/n1"].RateLimit)
			}
		}
	}
	for _, bad := range []string{"rate-limit fast", "rate-limit -1", "rate-limit-mode per-client"} {
		if _, err := run(t, s, "modify ltm virtual v "+bad); err == "" {
			t.Errorf("%s accepted", bad)
		}
	}
}
