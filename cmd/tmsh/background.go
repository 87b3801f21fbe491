package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/daemon"
	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/shell"
)

// runLtmdArg makes tmsh run as the background ltmd it starts: the same
// binary, so `go run ./cmd/tmsh` needs no ltmd built beside it.
const runLtmdArg = "--run-ltmd"

// exitInUse is the background daemon's exit status when another daemon
// claimed the socket first; the starting tmsh then joins that one.
const exitInUse = 3

// backgroundLog is the background daemon's log, in its state directory.
const backgroundLog = "ltmd.log"

// readyWait bounds how long tmsh waits for the daemon it started to answer.
const readyWait = 30 * time.Second

// runLtmd is `tmsh --run-ltmd --socket S --state-dir D [--own-namespace]`: ltmd's main loop,
// detached from any terminal, until SIGTERM or SIGINT.
func runLtmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tmsh "+runLtmdArg, flag.ContinueOnError)
	socket := fs.String("socket", "", "control socket")
	stateDir := fs.String("state-dir", "", "state directory")
	ownNS := fs.Bool("own-namespace", false, "ltmd owns its network namespace (wildcard virtual servers are served)")
	if err := fs.Parse(args); err != nil || *socket == "" || *stateDir == "" {
		fmt.Fprintln(stderr, "usage: tmsh "+runLtmdArg+" --socket PATH --state-dir DIR")
		return shell.ExitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGHUP)
	evloop.Govern(evloop.Governed{Procs: true, Polling: true}) // as ltmd --procs auto --busy-poll auto
	defer evloop.StopGoverning()
	err := daemon.Serve(ctx, daemon.Options{StateDir: *stateDir, Logger: logger, BusyPoll: daemon.DefaultBusyPoll, OwnNamespace: *ownNS}, *socket)
	switch {
	case errors.Is(err, control.ErrInUse):
		return exitInUse
	case err != nil:
		logger.Error("cannot serve", "socket", *socket, "state", *stateDir, "err", err)
		return 1
	}
	return 0
}

// background is an ltmd this tmsh started as a process of its own: it
// outlives tmsh, as a daemon started by hand would.
type background struct{ pid int }

// StopWhenIdle implements shell.Embedded: a background daemon keeps
// running when its tmsh leaves.
func (background) StopWhenIdle(time.Duration, func(int)) error { return nil }

// Announce implements shell.Announcer.
func (b background) Announce(socket, stateDir string) string {
	return fmt.Sprintf("no ltmd answered on %s; started one in the background (pid %d, state and log in %s; stop it with kill %d)", socket, b.pid, stateDir, b.pid)
}

// startBackground starts ltmd as a detached process (its own session, no
// terminal, its log appended to <state dir>/ltmd.log) and returns once it
// answers on socket.
func startBackground(socket, stateDir string, _ *slog.Logger) (shell.Embedded, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting ltmd: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(stateDir, backgroundLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ltmd log: %w", err)
	}
	defer lf.Close()
	args := []string{runLtmdArg, "--socket", socket, "--state-dir", stateDir}
	if ownNamespace {
		args = append(args, "--own-namespace")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Dir = stateDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ltmd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(readyWait)
	for {
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == exitInUse {
				return nil, control.ErrInUse
			}
			return nil, fmt.Errorf("the ltmd started in the background stopped (%v); see %s", err, lf.Name())
		case <-deadline:
			cmd.Process.Kill()
			return nil, fmt.Errorf("the ltmd started in the background did not answer on %s within %s; see %s", socket, readyWait, lf.Name())
		case <-time.After(20 * time.Millisecond):
		}
		if c, err := control.Dial(socket); err == nil {
			c.Close()
			return background{pid: cmd.Process.Pid}, nil
		}
	}
}
