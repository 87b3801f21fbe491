package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestRateClassesTranslated: rates with units, percentages of the
// parent's, a shaping policy's settings, the default ceiling and the
// direction reach the dataplane; a virtual's rate-class names its class.
func TestRateClassesTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net rate-shaping class root rate 10mbps ceiling 20mbps",
		"create net rate-shaping class half rate-percentage 50 ceiling-percentage 100 parent root direction to-client",
		"create net rate-shaping shaping-policy sp rate-percentage 10 ceiling-percentage 50 max-burst 65536",
		"create net rate-shaping class shaped parent root shaping-policy sp",
		"create net rate-shaping class flat rate 512kbps",
		"create ltm pool p members add { 127.183.200.1:80 }",
		"create ltm virtual vs destination 127.183.200.10:80 pool p rate-class flat profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, want := range []dataplane.RateClass{
		{Name: "/Common/root", Rate: 10e6, Ceiling: 20e6},
		{Name: "/Common/half", Rate: 5e6, Ceiling: 20e6, Parent: "/Common/root", Direction: dataplane.RateToClient},
		{Name: "/Common/shaped", Rate: 1e6, Ceiling: 10e6, MaxBurst: 65536, Parent: "/Common/root"},
		{Name: "/Common/flat", Rate: 512e3, Ceiling: 512e3},
	} {
		if got := dc.RateClasses[want.Name]; got == nil || *got != want {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if v := dc.Virtuals["/Common/vs"]; v == nil || v.RateClass != "/Common/flat" {
		t.Errorf("virtual's rate class: %+v", v)
	}
}

// TestRateClassesRefused: what BIG-IP refuses is refused with the reason,
// and nothing changes.
func TestRateClassesRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net rate-shaping class a rate 1mbps",
		"create net rate-shaping class b rate 1mbps parent a",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{"create net rate-shaping class r1 rate 10 mbps", "mbps"},
		{"create net rate-shaping class r2 rate 10furlongs", `"10furlongs" is not a rate for "rate"`},
		{"create net rate-shaping class r3 rate 2mbps ceiling 1mbps", "ceiling 1mbps is less than rate 2mbps"},
		{"modify net rate-shaping class a ceiling 500kbps", "Rate class /Common/a: ceiling (500000 bps) must not be less than rate (1000000 bps)"},
		{"create net rate-shaping class r4", "rate must be specified"},
		{"create net rate-shaping class r5 rate 1mbps rate-percentage 10 parent a", "give rate or rate-percentage, not both"},
		{"create net rate-shaping class r6 ceiling-percentage 10 rate 1mbps", "ceiling-percentage 10 needs a parent class"},
		{"create net rate-shaping class r7 rate 100bps", "below the least, 296 bps"},
		{"create net rate-shaping class r8 rate 1mbps parent nosuch", "nosuch"},
		{"create net rate-shaping class r9 rate 1mbps direction sideways", "sideways"},
		{"create net rate-shaping class r10 rate-percentage 101 parent a", "out of range"},
		{"modify net rate-shaping class a parent b", "parent cycle (/Common/a -> /Common/b -> /Common/a)"},
		{"modify net rate-shaping class a parent a", "parent cycle"},
		{"delete net rate-shaping class a", "in use"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list net rate-shaping class")
	for _, name := range []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"} {
		if strings.Contains(out, "class "+name+" ") {
			t.Errorf("%s was kept:\n%s", name, out)
		}
	}
	if a, _ := run(t, s, "list net rate-shaping class a"); strings.Contains(a, "parent") {
		t.Errorf("a cycle was kept:\n%s", a)
	}
}

// TestRateClassQueueDropTranslated: a class's queue and drop-policy
// (its own, or its shaping-policy's) reach the dataplane: the built-in
// sfq and tail are the zero values, pfifo and a custom red policy carry
// their numbers.
func TestRateClassQueueDropTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net rate-shaping queue fifo64 type pfifo pfifo-min-packets 64",
		"create net rate-shaping queue deep type sfq sfq-bucket-depth 32",
		"create net rate-shaping drop-policy early type red min-threshold 4 max-threshold 16 max-probability 50 inverse-weight 64",
		"create net rate-shaping drop-policy fair type fred fred-min-drop 3 fred-max-drop 20 fred-max-active 8",
		"create net rate-shaping shaping-policy sp queue deep drop-policy fair",
		"create net rate-shaping class plain rate 1mbps",
		"create net rate-shaping class fifo rate 1mbps queue fifo64 drop-policy early",
		"create net rate-shaping class builtin rate 1mbps queue pfifo drop-policy red",
		"create net rate-shaping class shaped rate 1mbps shaping-policy sp",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, tc := range []struct {
		name string
		q    dataplane.RateQueue
		d    dataplane.RateDrop
	}{
		{"/Common/plain", dataplane.RateQueue{}, dataplane.RateDrop{}},
		{"/Common/fifo", dataplane.RateQueue{FIFO: true, Limit: 64},
			dataplane.RateDrop{Type: dataplane.DropRED, MinThreshold: 4, MaxThreshold: 16, MaxProbability: 50, InverseWeight: 64}},
		{"/Common/builtin", dataplane.RateQueue{FIFO: true}, dataplane.RateDrop{Type: dataplane.DropRED}},
		{"/Common/shaped", dataplane.RateQueue{Depth: 32}, dataplane.RateDrop{Type: dataplane.DropFRED, MinDrop: 3, MaxDrop: 20, MaxActive: 8}},
	} {
		got := dc.RateClasses[tc.name]
		if got == nil || got.Queue != tc.q || got.Drop != tc.d {
			t.Errorf("%s: %+v, want queue %+v drop %+v", tc.name, got, tc.q, tc.d)
		}
	}
}

// TestDropPolicyRefused: a drop policy BIG-IP refuses is refused with
// the reason (at line:column where one statement gives it), and
// nothing changes.
func TestDropPolicyRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create net rate-shaping drop-policy dp type red min-threshold 4 max-threshold 16"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, want string }{
		{"create net rate-shaping drop-policy d1 type red min-threshold 20 max-threshold 10", "min-threshold 20 is more than max-threshold 10: the random drops start below where they all drop (at 1:63"},
		{"modify net rate-shaping drop-policy dp min-threshold 30", "Drop policy /Common/dp: min-threshold 30 is more than max-threshold 16"},
		{"create net rate-shaping drop-policy d2 max-probability 101", "out of range"},
		{"create net rate-shaping drop-policy d3 inverse-weight 100", "100"},
		{"create net rate-shaping drop-policy d4 fred-max-drop 401", "out of range"},
		{"create net rate-shaping drop-policy d5 type blue", "blue"},
		{"create net rate-shaping queue q1 type fifo", "fifo"},
		{"create net rate-shaping class c1 rate 1mbps drop-policy nosuch", "nosuch"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list net rate-shaping drop-policy dp")
	if !strings.Contains(out, "min-threshold 4") {
		t.Errorf("the refused modify changed dp:\n%s", out)
	}
}
