//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
)

// TestOwnNamespace: `--own-namespace` reaches the daemon: an ltmd
// started with it, in a network namespace of its own (unshare -n), takes
// a wildcard virtual with no warning (where it can steer: the BPF
// program needs root and Linux 5.9; else the warning says why, not the
// flag); one without it keeps the virtual, naming the flag.
func TestOwnNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: a network namespace needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("skipped: unshare is not installed")
	}
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Skipf("skipped: cannot make a network namespace: %v", err)
	}
	for _, tc := range []struct {
		own  bool
		want string
	}{
		{true, ""},
		{false, "it is served only by an ltmd started with --own-namespace"},
	} {
		dir := t.TempDir()
		sock := filepath.Join(dir, "s.sock")
		args := []string{"-n", os.Args[0], "--state-dir", filepath.Join(dir, "state"), "--socket", sock}
		if tc.own {
			args = append(args, "--own-namespace")
		}
		cmd := exec.Command("unshare", args...)
		cmd.Env = append(os.Environ(), asLtmd+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var c *control.Client
		var err error
		for range int(patience / (20 * time.Millisecond)) {
			if c, err = control.Dial(sock); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if c == nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("ltmd never answered: %v", err)
		}
		var out strings.Builder
		err = c.Exec(context.Background(), "create ltm virtual w destination 0.0.0.0:any mask any ip-forward", &out)
		c.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		wait(t, cmd)
		switch {
		case err != nil:
			t.Errorf("own %v: %v", tc.own, err)
		case tc.want == "" && out.String() != "" && !strings.Contains(out.String(), "which openltm cannot do here"):
			t.Errorf("own %v: %q, want no warning", tc.own, out.String())
		case tc.want != "" && !strings.Contains(out.String(), tc.want):
			t.Errorf("own %v: %q, want %q", tc.own, out.String(), tc.want)
		}
	}
}
