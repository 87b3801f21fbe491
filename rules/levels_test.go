package rules

import "testing"

// TestProcLevels: BIG-IP keeps upvar and uplevel in iRules, and
// procedures of real rules use them on their caller's variables.
func TestProcLevels(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"upvar", `proc choose {var} { upvar 1 $var p; set p pool_b }
when CLIENT_ACCEPTED { set p pool_a; call choose p; pool $p }`, "pool pool_b"},
		{"uplevel", `proc choose {} { uplevel 1 {set p pool_c} }
when CLIENT_ACCEPTED { set p pool_a; call choose; pool $p }`, "pool pool_c"},
		{"uplevel value", `proc twice {} { uplevel 1 {expr {$n * 2}} }
when CLIENT_ACCEPTED { set n 21; pool p[call twice] }`, "pool p42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := run(t, nil, []string{tc.body}, ClientAccepted)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tc.want {
				t.Errorf("calls %q, want %q", got, tc.want)
			}
		})
	}
}
