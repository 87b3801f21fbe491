package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// runOrLoad runs cmd on s; "load:TEXT" writes TEXT to a file in dir and
// merges it (load sys config merge file), as an admin's file would come.
// It returns the command's error text, "" when it succeeded.
func runOrLoad(t *testing.T, s *Session, dir, cmd string) string {
	t.Helper()
	if text, ok := strings.CutPrefix(cmd, "load:"); ok {
		conf := filepath.Join(dir, "merge.conf")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd = "load sys config merge file " + conf
	}
	_, err := run(t, s, cmd)
	return err
}

// openWithPlane opens an engine in dir with a running dataplane attached;
// both are closed when the test ends.
func openWithPlane(t *testing.T, dir string) (*Engine, *dataplane.Plane) {
	t.Helper()
	e := openTest(t, dir)
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(p.Close)
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	return e, p
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// check is what a verify asks of one hook: prepare, then drop the change.
func check(h Hook, old, cfg *objects.Config, opts CommitOptions) error {
	c, err := h.Prepare(old, cfg, opts)
	if err != nil {
		return err
	}
	c.Abort()
	return nil
}
