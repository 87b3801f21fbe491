package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
)

// asLtmd makes the test binary run main, so the tests drive the real
// program in its own process.
const asLtmd = "OPENLTM_TEST_AS_LTMD"

func TestMain(m *testing.M) {
	if os.Getenv(asLtmd) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// patience bounds waits; it is a deadline for failing, not a measurement.
const patience = 15 * time.Second

func start(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asLtmd+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stderr
}

func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(patience):
		t.Fatal("ltmd did not exit")
	}
	return -1
}

// TestServesAndStopsCleanly: with the default options, with loops that
// hold their threads (--busy-poll hold) and with loops that write one
// socket at a time (--send-batch off).
func TestServesAndStopsCleanly(t *testing.T) {
	for _, extra := range [][]string{nil, {"--busy-poll", "hold"}, {"--send-batch", "off"}} {
		t.Run(strings.Join(append([]string{"default"}, extra...), " "), func(t *testing.T) {
			servesAndStops(t, extra...)
		})
	}
}

func servesAndStops(t *testing.T, extra ...string) {
	dir, err := os.MkdirTemp("", "ltmd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s.sock")
	cmd, stderr := start(t, append([]string{"--state-dir", filepath.Join(dir, "state"), "--socket", sock, "--log-level", "debug"}, extra...)...)

	var c *control.Client
	for range int(patience / (20 * time.Millisecond)) {
		if c, err = control.Dial(sock); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c == nil {
		t.Fatalf("ltmd never answered: %v\n%s", err, stderr)
	}
	if err := c.Exec(context.Background(), "list ltm pool", io.Discard); err != nil {
		t.Fatalf("list ltm pool: %v", err)
	}
	c.Close()

	// A second daemon on the same socket refuses to start.
	second, stderr2 := start(t, "--state-dir", filepath.Join(dir, "other"), "--socket", sock)
	if code := wait(t, second); code != 1 || !strings.Contains(stderr2.String(), "already serving") {
		t.Fatalf("second ltmd: status %d, stderr %s", code, stderr2)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("status %d after SIGTERM\n%s", code, stderr)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Fatalf("no clean stop logged:\n%s", stderr)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--log-level", "loud"}, {"extra"}, {"--nope"}, {"--procs", "many"}, {"--procs", "0"}, {"--busy-poll", "fast"}, {"--busy-poll", "-1ms"}, {"--send-batch", "maybe"}, {"--root-hints", "root.example"}, {"--root-hints", "127.68.0.1:99999"}} {
		cmd, _ := start(t, args...)
		if code := wait(t, cmd); code != 2 {
			t.Errorf("ltmd %v: status %d, want 2", args, code)
		}
	}
}

// A --geoip-db file that cannot be loaded stops the start, naming it.
func TestBadGeoIPDatabase(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.mmdb")
	if err := os.WriteFile(junk, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{junk, filepath.Join(dir, "missing.mmdb")} {
		cmd, stderr := start(t, "--state-dir", filepath.Join(dir, "state"), "--socket", filepath.Join(dir, "ltmd.sock"), "--geoip-db", db)
		if code := wait(t, cmd); code != 1 || !strings.Contains(stderr.String(), filepath.Base(db)) {
			t.Errorf("--geoip-db %s: status %d, stderr %q", db, code, stderr.String())
		}
	}
}
