package objects

import "testing"

// TestIIOPProfileKind: the iiop profile's settings, defaults and ranges,
// and the built-in /Common/iiop it inherits from.
func TestIIOPProfileKind(t *testing.T) {
	p := func(body string) string {
		return "ltm profile iiop /Common/iiop_a {\n    defaults-from /Common/iiop\n" + body + "\n}\n"
	}
	for _, tc := range []struct {
		name, text string
		refused    string
	}{
		{"every setting", p("    abort-on-timeout disabled\n    persist-object-key enabled\n    persist-request-id enabled\n    timeout 5"), ""},
		{"no timeout", p("    timeout 0"), ""},
		{"largest timeout", p("    timeout 4294967295"), ""},
		{"timeout past 32 bits", p("    timeout 4294967296"), "timeout"},
		{"negative timeout", p("    timeout -1"), "timeout"},
		{"timeout not a number", p("    timeout soon"), "soon"},
		{"abort yes", p("    abort-on-timeout yes"), "yes"},
		{"persist true", p("    persist-object-key true"), "true"},
		{"unknown setting", p("    max-message-size 100"), "max-message-size"},
		{"parent missing", "ltm profile iiop /Common/iiop_b {\n    defaults-from /Common/nope\n}\n", "nope"},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
	cfg := Default.Builtins()
	k := Default.Kind("ltm profile iiop")
	b := cfg.Get(k, "/Common/iiop")
	if b == nil {
		t.Fatal("no built-in /Common/iiop")
	}
	want := map[string]string{"abort-on-timeout": "enabled", "persist-object-key": "disabled", "persist-request-id": "disabled", "timeout": "30"}
	for name, v := range want {
		if got := k.MustProp(name).Effective(cfg, b); got != v {
			t.Errorf("/Common/iiop %s = %q, want %q", name, got, v)
		}
	}
}
