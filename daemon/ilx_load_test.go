package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestILXSaveLoad: a saved configuration with a workspace and a plugin
// loads back whole (staged-directory included), and a restarted ltmd
// runs the plugin from its staged copy; settings openltm keeps without
// acting on warn.
func TestILXSaveLoad(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create ilx workspace ws extension ext",
		"create ilx plugin pl from-workspace ws",
	} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	out, err := run(t, s, "modify ilx plugin pl extensions modify { ext { heartbeat-interval 5 } }")
	if err != "" || !strings.Contains(out, "Warning") || !strings.Contains(out, "heartbeat-interval") {
		t.Errorf("a kept setting: %q, %q", out, err)
	}
	conf := filepath.Join(dir, "saved.conf")
	if _, err := run(t, s, "save sys config file "+conf); err != "" {
		t.Fatal(err)
	}
	text := readFile(t, conf)
	for _, want := range []string{"ilx workspace /Common/ws {", "ilx plugin /Common/pl {", "staged-directory " + filepath.Join(dir, "ilx", "plugins", "Common", "pl")} {
		if !strings.Contains(text, want) {
			t.Errorf("the saved configuration lacks %q:\n%s", want, text)
		}
	}
	if _, err := run(t, s, "load sys config file "+conf); err != "" {
		t.Fatalf("load: %s", err)
	}
	if e.Config().Get(ilxPlugin, "/Common/pl") == nil {
		t.Fatal("the plugin is gone after the load")
	}
	e.Close()
	e2 := openTest(t, dir)
	defer e2.Close()
	st, _, ok := e2.ilx.Stats("/Common/pl")
	if !ok || len(st) != 1 || st[0].Name != "ext" {
		t.Errorf("after a restart: %+v %v", st, ok)
	}
	if _, err := os.Stat(filepath.Join(dir, "ilx", "node_modules", "f5-nodejs", "index.js")); err != nil {
		t.Errorf("the f5-nodejs module: %v", err)
	}
}
