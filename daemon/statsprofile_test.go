package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/rules"
)

// TestStatisticsProfileShow: a statistics profile's named fields are
// what STATS:: counts into once its configuration is in service; show
// lists them with their values and reset-stats zeroes them; a commit that
// keeps a field keeps its value.
func TestStatisticsProfileShow(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm profile statistics browsers field1 ie field2 other field5 cur"); err != "" {
		t.Fatal(err)
	}
	st := e.rules.rt.statsEnv(e.log)
	p := rules.NewProgram(e.rules.rt.sharedEnv(e.log), mustCompileRule(t, "when CLIENT_ACCEPTED { STATS::incr browsers ie 3; STATS::set browsers cur 42 }"))
	cs := p.NewConnState(nil)
	if err := cs.Run(rules.ClientAccepted); err != nil {
		t.Fatal(err)
	}
	cs.Release()
	out, err := run(t, s, "show ltm profile statistics browsers")
	if err != "" {
		t.Fatal(err)
	}
	for _, want := range []string{"Ltm::Statistics Profile: browsers", "Fields\n", "ie                    3\n", "other                 0\n", "cur                  42\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t, s, "modify ltm profile statistics browsers field2 none field3 new"); err != "" {
		t.Fatal(err)
	}
	f, _ := st.Fields("/Common/browsers")
	if len(f) != 3 || f[0] != (rules.StatField{Name: "ie", Value: 3}) || f[1] != (rules.StatField{Name: "new"}) || f[2] != (rules.StatField{Name: "cur", Value: 42}) {
		t.Errorf("after a commit: %+v", f)
	}
	if _, err := run(t, s, "reset-stats ltm profile statistics browsers"); err != "" {
		t.Fatal(err)
	}
	if f, _ := st.Fields("/Common/browsers"); f[0].Value != 0 || f[2].Value != 0 {
		t.Errorf("after reset-stats: %+v", f)
	}
}

func mustCompileRule(t *testing.T, body string) *rules.Rule {
	t.Helper()
	r, err := rules.Compile("/Common/r", body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
