package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsonTransformJS is an extension that rewrites a JSON document: it
// upper-cases the value of "name" and counts the keys.
const jsonTransformJS = `var f5 = require('f5-nodejs');
var ilx = new f5.ILXServer();
ilx.addMethod('transform', function(req, res) {
  var doc = JSON.parse(req.params()[0]);
  doc.name = String(doc.name).toUpperCase();
  doc.keys = Object.keys(doc).length;
  res.reply(JSON.stringify(doc));
});
ilx.listen();
`

// TestILXWorkspacePlugin: create ilx workspace W extension E lays out
// the extension's files under the state directory and lists it; a
// plugin made from the workspace lists its extensions and runs them
// (ILX::call through the rules' ILX reaches a real node process); show
// ilx plugin shows it running; the errors a user can make are refused
// with BIG-IP's codes and change nothing.
func TestILXWorkspacePlugin(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	ws := filepath.Join(dir, "ilx", "workspaces", "Common", "ws")
	for _, c := range []struct{ cmd, out, err string }{
		{cmd: "create ilx workspace ws extension ext"},
		{cmd: "list ilx workspace ws", out: "ilx workspace ws {\n    extensions {\n        ext { }\n    }\n    staged-directory " + ws + "\n}\n"},
		{cmd: "create ilx workspace ws extension ext", err: "01020066:3: The requested extension (ext) already exists in workspace (/Common/ws)."},
		{cmd: "create ilx workspace ws", err: "01020066"},
		{cmd: "create ilx workspace ws rule ilx_rule"},
		{cmd: "create ilx workspace w2 from-uri http://example.com/x.tgz", err: "does not take archives"},
		{cmd: "create ilx workspace ws extension ../x", err: "cannot name a directory"},
		{cmd: "create ilx plugin pl", err: "01070734:3: Configuration error: ilx plugin (/Common/pl) needs from-workspace"},
		{cmd: "create ilx plugin pl from-workspace nows", err: "01020036:3: The requested workspace (/Common/nows) was not found."},
		{cmd: "list ilx plugin", out: ""},
	} {
		out, err := run(t, s, c.cmd)
		if c.err != "" {
			if !strings.Contains(err, c.err) {
				t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
			}
			continue
		}
		if err != "" {
			t.Fatalf("%s: %s", c.cmd, err)
		}
		if c.out != "" && out != c.out {
			t.Errorf("%s:\n%s\nwant:\n%s", c.cmd, out, c.out)
		}
	}
	for _, f := range []string{"extensions/ext/index.js", "extensions/ext/package.json", "extensions/ext/node_modules", "rules/ilx_rule.tcl"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("the workspace lacks %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "extensions/ext/index.js")); !strings.Contains(string(b), "require('f5-nodejs')") {
		t.Errorf("the default index.js:\n%s", b)
	}
	if err := os.WriteFile(filepath.Join(ws, "extensions/ext/index.js"), []byte(jsonTransformJS), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, s, "create ilx plugin pl from-workspace ws"); err != "" {
		t.Fatalf("create ilx plugin: %s %s", out, err)
	}
	out, _ := run(t, s, "list ilx plugin pl")
	if !strings.Contains(out, "    extensions {\n        ext { }\n    }\n    from-workspace ws\n") || !strings.Contains(out, "staged-directory "+filepath.Join(dir, "ilx", "plugins", "Common", "pl")) {
		t.Errorf("list ilx plugin pl:\n%s", out)
	}
	if _, err := run(t, s, "modify ilx plugin pl extensions modify { ext { concurrency-mode single max-restarts 3 } }"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s, "delete ilx workspace ws"); !strings.Contains(err, "01070265") {
		t.Errorf("deleting a workspace a plugin uses: %q", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (Debian package nodejs): the extension cannot run")
	}
	x := &e.rules.rt.ilx
	var got string
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := x.Call(ctx, "/Common/pl", "ext", "transform", []string{`{"name":"ada"}`})
		cancel()
		if err == nil {
			got = string(res)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != `"{\"name\":\"ADA\",\"keys\":1}"` {
		t.Errorf("transform: %s", got)
	}
	out, _ = run(t, s, "show ilx plugin pl")
	for _, want := range []string{"Ilx::Plugin: pl", "State", "enabled", "Extension: ext", "running", "Concurrency Mode", "single", "Restarts"} {
		if !strings.Contains(out, want) {
			t.Errorf("show ilx plugin lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t, s, "restart ilx plugin pl"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s, "restart ilx plugin nope"); !strings.Contains(err, "01020036") {
		t.Errorf("restart of an unknown plugin: %q", err)
	}
	if _, err := run(t, s, "modify ilx plugin pl disabled"); err != "" {
		t.Fatal(err)
	}
	if err := x.Init("/Common/pl", "ext"); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("a disabled plugin: %v", err)
	}
	if _, err := run(t, s, "delete ilx plugin pl"); err != "" {
		t.Fatal(err)
	}
	if err := x.Init("/Common/pl", "ext"); err == nil {
		t.Error("a deleted plugin still answers")
	}
	if _, err := run(t, s, "delete ilx workspace ws"); err != "" {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("the deleted workspace's files are still there: %v", err)
	}
}
