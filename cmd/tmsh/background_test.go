package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/shell"
)

// The test binary is the background ltmd that startBackground starts.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == runLtmdArg {
		os.Exit(runLtmd(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// With no daemon running, tmsh starts one in the background; it outlives
// the tmsh that started it, and the next tmsh joins it.
func TestBackgroundDaemonOutlivesTmsh(t *testing.T) {
	dir, err := os.MkdirTemp("", "bg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, state := filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")
	os.MkdirAll(state, 0o700)

	var out, errb bytes.Buffer
	o := shell.Options{Socket: sock, StateDir: state, Command: "create ltm pool bg_pool",
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StartDaemon: startBackground}
	if got := shell.Run(o); got != shell.ExitOK {
		t.Fatalf("status %d, stderr %s", got, errb.String())
	}
	m := regexp.MustCompile(`started one in the background \(pid (\d+),`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("stderr %q does not say a daemon was started in the background", errb.String())
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGTERM) })

	// tmsh is gone; the daemon answers, and the next tmsh joins it.
	c, err := control.Dial(sock)
	if err != nil {
		t.Fatalf("the background daemon does not answer after its tmsh left: %v", err)
	}
	c.Close()
	out.Reset()
	errb.Reset()
	o.Command = "list ltm pool bg_pool one-line"
	if got := shell.Run(o); got != shell.ExitOK || errb.Len() != 0 || !strings.Contains(out.String(), "ltm pool bg_pool") {
		t.Fatalf("second run: status %d, stdout %q, stderr %q", got, out.String(), errb.String())
	}
	log, _ := os.ReadFile(filepath.Join(state, backgroundLog))
	if !strings.Contains(string(log), "ltmd ready") {
		t.Errorf("ltmd.log holds %q", log)
	}

	// SIGTERM stops it, and it takes its socket with it.
	syscall.Kill(pid, syscall.SIGTERM)
	for range 200 {
		if _, err := os.Lstat(sock); os.IsNotExist(err) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the background daemon did not stop on SIGTERM")
}
