package shell

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// fakeDaemon is a StartFunc serving the test backend, counting its starts
// and stops.
type fakeDaemon struct {
	starts, stops int
}

type fakeRunning struct {
	f      *fakeDaemon
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *fakeRunning) StopWhenIdle(time.Duration, func(int)) error {
	r.cancel()
	<-r.done
	r.f.stops++
	return nil
}

func (f *fakeDaemon) start(socket, stateDir string, logger *slog.Logger) (Embedded, error) {
	ln, err := control.Listen(socket)
	if err != nil {
		return nil, err
	}
	f.starts++
	ctx, cancel := context.WithCancel(context.Background())
	r := &fakeRunning{f: f, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		control.Serve(ctx, ln, &controltest.Backend{}, logger)
	}()
	return r, nil
}

func TestStartDaemonWhenNoneAnswers(t *testing.T) {
	dir, err := os.MkdirTemp("", "emb") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, state := filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")
	for _, tc := range []struct {
		name           string
		start          bool
		status         int
		stdout, stderr string
	}{
		{"started, used and stopped", true, ExitOK, "hi\n",
			fmt.Sprintf("openltm: no ltmd answered on %s; started an embedded one (state in %s)\n", sock, state)},
		{"nothing to start", false, ExitUsage, "", "tmsh: " + control.ErrNoDaemon.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDaemon{}
			var out, errb bytes.Buffer
			o := Options{Socket: sock, StateDir: state, Command: "echo hi", Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
			if tc.start {
				o.StartDaemon = f.start
			}
			if got := Run(o); got != tc.status {
				t.Fatalf("status %d, stderr %q", got, errb.String())
			}
			if out.String() != tc.stdout || !strings.HasPrefix(errb.String(), tc.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q, %q", out.String(), errb.String(), tc.stdout, tc.stderr)
			}
			if want := map[bool]int{true: 1}[tc.start]; f.starts != want || f.stops != want {
				t.Errorf("%d starts and %d stops, want %d", f.starts, f.stops, want)
			}
			if tc.start {
				if _, err := os.Stat(filepath.Join(state, embeddedLog)); err != nil {
					t.Errorf("no embedded log: %v", err)
				}
			}
		})
	}
}

// The shell stays a client: nothing it imports may pull in the daemon or
// its show layouts.
func TestShellImportsNoDaemon(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the imports with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/openltm/openltm/daemon") || strings.HasPrefix(pkg, "github.com/openltm/openltm/dataplane") {
			t.Errorf("shell depends on %s", pkg)
		}
	}
}
