package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ltm global-settings rule has no property table: tmsh lists it and
// refuses to change it with an error that says why, and a bigip.conf
// that holds it keeps it verbatim.
func TestLTMRuleGlobals(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, out, err string }{
		{"list ltm global-settings rule", "ltm global-settings rule { }\n", ""},
		{"modify ltm global-settings rule description x", "", "ltm global-settings rule is not supported by openltm yet"},
		{"create ltm global-settings rule", "", "is a singleton BIG-IP keeps: it cannot be created, only modified"},
		{"delete ltm global-settings rule", "", "it cannot be deleted, only modified"},
	} {
		out, errText := run(t, s, tc.cmd)
		if out != tc.out || !strings.Contains(errText, tc.err) || tc.err == "" && errText != "" {
			t.Errorf("%s: %q %q, want %q %q", tc.cmd, out, errText, tc.out, tc.err)
		}
	}
	mustRun(t, s, "save sys config")
	e.Close()
	conf := filepath.Join(dir, "bigip.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "global-settings rule") {
		t.Fatalf("an unset singleton was saved:\n%s", b)
	}
	// A loaded one is kept verbatim and listed as it was.
	f := filepath.Join(dir, "rule-globals.conf")
	if err := os.WriteFile(f, []byte("ltm global-settings rule {\n    some-setting enabled\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	s = e.NewSession("admin").(*Session)
	out, errText := run(t, s, "load sys config merge file "+f)
	if !strings.Contains(out, "kept verbatim") {
		t.Errorf("load: %q %q, want the warning that it is kept verbatim", out, errText)
	}
	out, errText = run(t, s, "list ltm global-settings rule")
	if errText != "" || !strings.Contains(out, "some-setting enabled") {
		t.Fatalf("list: %q %q", out, errText)
	}
}
