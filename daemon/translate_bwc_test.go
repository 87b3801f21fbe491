package daemon

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestBWCPriorityAndMeasureTranslated: a policy's priority group (its
// levels' numbers and weights), a category's level, and its measurement
// settings reach the dataplane; no warning says they are kept only.
func TestBWCPriorityAndMeasureTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool log_pool members add { 127.151.200.9:514 }",
		"create sys log-config destination remote-high-speed-log hsl pool-name log_pool protocol udp",
		"create sys log-config publisher pub destinations replace-all-with { hsl }",
		"create net bwc priority-group pg priority-levels add { video { level 6 weight 60 } bulk { level 1 weight 10 } }",
		"create net bwc policy gold max-rate 10mbps max-user-rate 10mbps dynamic enabled traffic-priority-map pg measure enabled log-publisher pub log-period 500 categories add { stream { max-cat-rate 5mbps traffic-priority-map video } other { max-cat-rate 5mbps } }",
		"create net bwc policy plain max-rate 2mbps",
	} {
		out, err := run(t, s, c)
		if err != "" {
			t.Fatalf("%s: %s", c, err)
		}
		if strings.Contains(out, "kept") {
			t.Errorf("%s: %s", c, out)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	got := dc.BWC["/Common/gold"]
	wantPG := &dataplane.BWCPriorityGroup{Name: "/Common/pg", Weights: [8]int{1: 10, 6: 60}, Levels: map[string]int{"video": 6, "bulk": 1}}
	if !reflect.DeepEqual(got.Priority, wantPG) || !got.Measure || got.LogPublisher != "/Common/pub" || got.LogPeriod != 500*time.Millisecond {
		t.Errorf("gold: priority %+v measure %v publisher %q period %v", got.Priority, got.Measure, got.LogPublisher, got.LogPeriod)
	}
	cats := map[string]dataplane.BWCCategory{}
	for _, c := range got.Categories {
		cats[c.Name] = c
	}
	if c := cats["stream"]; !c.Leveled || c.Level != 6 {
		t.Errorf("stream: %+v, want level 6", c)
	}
	if c := cats["other"]; c.Leveled {
		t.Errorf("other: %+v, want no level", c)
	}
	if p := dc.BWC["/Common/plain"]; p.Priority != nil || p.Measure || p.LogPublisher != "" || p.LogPeriod != 2048*time.Millisecond {
		t.Errorf("plain: %+v", p)
	}
}

// TestBWCPriorityRefused: what a priority group or a policy cannot mean
// is refused with the reason, and nothing changes.
func TestBWCPriorityRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net bwc priority-group pg priority-levels add { hi { level 7 weight 80 } lo { level 0 weight 20 } }",
		"create net bwc policy dyn max-rate 10mbps dynamic enabled traffic-priority-map pg",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{"create net bwc priority-group empty", "priority-levels must have at least one level"},
		{"create net bwc priority-group dup priority-levels add { a { level 3 } b { level 3 } }", "another level of the group is level 3"},
		{"create net bwc priority-group big priority-levels add { a { level 8 } }", "level"},
		{"create net bwc priority-group heavy priority-levels add { a { weight 101 } }", "weight"},
		{"create net bwc policy p1 max-rate 1mbps traffic-priority-map nosuch", "nosuch"},
		{"create net bwc policy p2 max-rate 1mbps dynamic enabled categories add { c { max-cat-rate 1mbps traffic-priority-map hi } }", "needs the policy's traffic-priority-map"},
		{"modify net bwc policy dyn categories add { c { max-cat-rate 1mbps traffic-priority-map mid } }", "priority group /Common/pg has no level mid"},
		{"modify net bwc policy dyn log-period soon", "log-period"},
		{"delete net bwc priority-group pg", "in use"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list net bwc")
	for _, name := range []string{"empty", "dup", "big", "heavy", "p1", "p2", "categories", "soon"} {
		if strings.Contains(out, name) {
			t.Errorf("%s was kept:\n%s", name, out)
		}
	}
}
