package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestIfiles imports a file from tmsh, serves it from a rule, imports it
// again on modify, and keeps it across a restart after the source file is
// gone.
func TestIfiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "maint.txt")
	if err := os.WriteFile(src, []byte("down for maintenance"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() (*Engine, *dataplane.Plane) {
		e := openTest(t, dir)
		p := dataplane.New(dataplane.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := e.AttachDataplane(p); err != nil {
			t.Fatal(err)
		}
		return e, p
	}
	e, p := start()
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, err string }{
		{"create sys file ifile missing.txt source-path file:" + src + ".nope", "cannot import source-path file:" + src + ".nope: no such file"},
		{"create sys file ifile rel.txt source-path file:maint.txt", "must be file:/absolute/path"},
		{"create sys file ifile maint.txt source-path file:" + src, ""},
		{"create sys file ifile bad.txt checksum SHA1:1:00", "checksum"},
		{"create ltm ifile maint file-name maint.txt", ""},
		{"create ltm rule page {\nwhen CLIENT_ACCEPTED { TCP::collect }\nwhen CLIENT_DATA {\n  TCP::respond \"[ifile get maint] rev [ifile revision /Common/maint] [lsort [ifile listall]]\\n\"\n  TCP::close\n}\n}", ""},
		{"create ltm virtual vs_page destination 127.0.93.1:9000 rules { page }", ""},
		{"delete sys file ifile maint.txt", "in use"},
	} {
		_, err := run(t, s, c.cmd)
		if (c.err == "") != (err == "") || !strings.Contains(err, c.err) {
			t.Fatalf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if a := askVS(t, "127.0.93.1:9000", "x"); a != "down for maintenance rev 1 /Common/maint" {
		t.Fatalf("served %q", a)
	}
	out, _ := run(t, s, "list sys file ifile maint.txt")
	for _, w := range []string{"checksum SHA1:20:", "revision 1", "size 20", "created-by admin", "source-path file:" + src} {
		if !strings.Contains(out, w) {
			t.Errorf("list lacks %q:\n%s", w, out)
		}
	}
	// The file changes; a modify that names the same path imports it again.
	if err := os.WriteFile(src, []byte("back at 14:00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := askVS(t, "127.0.93.1:9000", "x"); a != "down for maintenance rev 1 /Common/maint" {
		t.Fatalf("content changed without a modify: %q", a)
	}
	if _, err := run(t, s, "modify sys file ifile maint.txt source-path file:"+src); err != "" {
		t.Fatal(err)
	}
	if a := askVS(t, "127.0.93.1:9000", "x"); a != "back at 14:00 rev 2 /Common/maint" {
		t.Fatalf("after modify: %q", a)
	}
	// Restart without the source file: the content was stored.
	p.Close()
	e.Close()
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	e, p = start()
	defer e.Close()
	defer p.Close()
	if a := askVS(t, "127.0.93.1:9000", "x"); a != "back at 14:00 rev 2 /Common/maint" {
		t.Fatalf("after restart: %q", a)
	}
	// A modify whose source is gone is refused, and serves on unchanged.
	s = e.NewSession("admin").(*Session)
	if _, err := run(t, s, "modify sys file ifile maint.txt source-path file:"+src); !strings.Contains(err, "no such file") {
		t.Fatalf("modify with the source gone: %q", err)
	}
}

// TestIfilesFromFiles: a configuration file creates iFiles from their
// source-path; a file saved by another daemon (checksum, revision and
// all) loads into a new one, which imports the content it lacks; a text
// whose content is neither stored nor readable is refused whole.
func TestIfilesFromFiles(t *testing.T) {
	work := t.TempDir()
	page := filepath.Join(work, "page.html")
	if err := os.WriteFile(page, []byte("<p>sorry</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(work, "in.conf")
	if err := os.WriteFile(conf, []byte("sys file ifile /Common/page.html {\n    source-path file:"+page+"\n}\nltm ifile /Common/page {\n    file-name /Common/page.html\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := openTest(t, t.TempDir())
	defer a.Close()
	s := a.NewSession("admin").(*Session)
	if _, err := run(t, s, "load sys config merge file "+conf); err != "" {
		t.Fatal(err)
	}
	saved := filepath.Join(work, "saved.conf")
	if _, err := run(t, s, "save sys config file "+saved); err != "" {
		t.Fatal(err)
	}
	text := readFile(t, saved)
	if !strings.Contains(text, "checksum SHA1:12:") || !strings.Contains(text, "revision 1") {
		t.Fatalf("saved:\n%s", text)
	}
	if got := a.ifiles(a.Config()); len(got.names) != 1 || string(got.m["/Common/page"].Content()) != "<p>sorry</p>" {
		t.Fatalf("ifiles %+v", got.names)
	}

	// Another daemon loads the saved text: it has no content for that
	// checksum yet, and imports it from source-path.
	b := openTest(t, t.TempDir())
	defer b.Close()
	sb := b.NewSession("admin").(*Session)
	if _, err := run(t, sb, "load sys config merge file "+saved); err != "" {
		t.Fatal(err)
	}
	if f, ok := b.ifiles(b.Config()).lookup("page"); !ok || string(f.Content()) != "<p>sorry</p>" {
		t.Fatalf("second daemon: %v %v", f, ok)
	}

	// A third, with the source gone: the text is refused and nothing
	// changes.
	os.Remove(page)
	c := openTest(t, t.TempDir())
	defer c.Close()
	sc := c.NewSession("admin").(*Session)
	if _, err := run(t, sc, "load sys config merge file "+saved); !strings.Contains(err, "cannot import source-path") {
		t.Fatalf("load without content: %q", err)
	}
	if c.Config().Get(sysFileIfile, "/Common/page.html") != nil {
		t.Fatal("a refused load left the object")
	}
}
