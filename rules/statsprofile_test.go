package rules

import (
	"strings"
	"testing"
)

func TestStatsProfileCommands(t *testing.T) {
	env := &Env{Stats: NewStatsProfiles(), IStats: NewIStats()}
	env.Stats.Define(map[string][]string{"/Common/browsers": {"ie", "other", "cur", "low"}})
	eval := func(script string) (string, error) {
		t.Helper()
		p := NewProgram(env, mustCompile(t, "stats", "when CLIENT_ACCEPTED { set ::out ["+script+"] }"))
		s := p.NewConnState(newFakeConn())
		defer s.Release()
		if err := s.Run(ClientAccepted); err != nil {
			return "", err
		}
		v, _ := s.Var("out")
		return v, nil
	}
	for _, c := range []struct{ script, want, err string }{
		{"STATS::incr browsers ie", "1", ""},
		{"STATS::incr /Common/browsers ie 5", "6", ""},
		{"STATS::incr browsers ie -2", "4", ""},
		{"STATS::get browsers ie", "4", ""},
		{"STATS::set browsers cur 10", "10", ""},
		{"STATS::setmax browsers cur 7", "10", ""},
		{"STATS::setmax browsers cur 12", "12", ""},
		{"STATS::set browsers low 5", "5", ""},
		{"STATS::setmin browsers low 9", "5", ""},
		{"STATS::setmin browsers low 2", "2", ""},
		{"STATS::set browsers other", "0", ""},
		{"STATS::get browsers nope", "", `statistics profile /Common/browsers has no field "nope" (its fields: ie other cur low)`},
		{"STATS::incr missing ie", "", "no statistics profile /Common/missing"},
		{"STATS::incr browsers ie x", "", `"x" is not a whole number`},
		{"STATS::get browsers ie 1", "", "wrong # args"},
		{"ISTATS::incr {uri /a counter hits} 1", "", ""},
		{"ISTATS::incr {uri  /a counter hits} 2", "", ""},
		{"ISTATS::get {uri /a counter hits}", "3", ""},
		{"ISTATS::set {vs web gauge conns} -4", "", ""},
		{"ISTATS::incr {vs web gauge conns} -1", "", ""},
		{"ISTATS::get {vs web gauge conns}", "-5", ""},
		{"ISTATS::set {vs web string owner} {team a}", "", ""},
		{"ISTATS::get {vs web string owner}", "team a", ""},
		{"ISTATS::get {vs other counter never}", "0", ""},
		{"ISTATS::remove {uri /a counter hits}", "", ""},
		{"ISTATS::get {uri /a counter hits}", "0", ""},
		{"ISTATS::incr {uri /a counter hits} -1", "", "a counter only grows"},
		{"ISTATS::incr {vs web string owner} 1", "", "a string iStat is not incremented"},
		{"ISTATS::get {uri /a hits}", "", `is not "NAMESPACE NAME TYPE FIELD"`},
		{"ISTATS::get {uri /a meter hits}", "", `type "meter" is not counter, gauge or string`},
	} {
		got, err := eval(c.script)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want error %q", c.script, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.script, got, err, c.want)
		}
	}
	// A commit that keeps a field keeps its value; one that drops it,
	// loses it.
	env.Stats.Define(map[string][]string{"/Common/browsers": {"other", "ie", "new"}})
	f, ok := env.Stats.Fields("/Common/browsers")
	if !ok || len(f) != 3 || f[0] != (StatField{"other", 0}) || f[1] != (StatField{"ie", 4}) || f[2] != (StatField{"new", 0}) {
		t.Errorf("after a commit: %+v", f)
	}
	env.Stats.Reset("/Common/browsers")
	if f, _ := env.Stats.Fields("/Common/browsers"); f[1].Value != 0 {
		t.Errorf("after reset: %+v", f)
	}
	if _, err := eval("STATS::get browsers cur"); err == nil {
		t.Error("a dropped field still answers")
	}
	noenv := NewProgram(&Env{}, mustCompile(t, "stats", "when CLIENT_ACCEPTED { STATS::get browsers ie }")).NewConnState(newFakeConn())
	defer noenv.Release()
	if err := noenv.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "no statistics profiles") {
		t.Errorf("without a store: %v", err)
	}
}
