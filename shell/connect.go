package shell

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/openltm/openltm/control"
)

// startAttempts bounds how long tmsh waits for another tmsh that is
// starting an embedded daemon on the same socket at the same moment.
const (
	startAttempts = 50
	startBackoff  = 100 * time.Millisecond
)

// embeddedLog is where an embedded daemon writes its log, inside the state
// directory: its lines must not land in the middle of the prompt.
const embeddedLog = "ltmd.log"

// connection is a session with ltmd and, when this tmsh had to start one,
// the daemon running inside it.
type connection struct {
	client   *control.Client
	embedded Embedded
	logFile  *os.File
}

// connect opens a session with the daemon on paths.Socket. When nothing
// answers there and start is set, it starts an embedded daemon on that
// socket (so other tmsh processes can join it) with its state in
// paths.StateDir, and says so in one line on stderr.
func connect(paths control.Paths, start StartFunc, stderr io.Writer) (*connection, error) {
	var lastErr error
	for range startAttempts {
		c, err := control.Dial(paths.Socket)
		if err == nil {
			return &connection{client: c}, nil
		}
		if !errors.Is(err, control.ErrNoDaemon) || start == nil {
			return nil, err
		}
		conn, err := startEmbedded(paths, start)
		if errors.Is(err, control.ErrInUse) {
			// Another process claimed the socket first: it is starting a
			// daemon right now. Give it a moment, then join it.
			lastErr = err
			time.Sleep(startBackoff)
			continue
		}
		if err != nil {
			return nil, err
		}
		if a, ok := conn.embedded.(Announcer); ok {
			fmt.Fprintln(stderr, "openltm: "+a.Announce(paths.Socket, paths.StateDir))
		} else {
			fmt.Fprintf(stderr, "openltm: no ltmd answered on %s; started an embedded one (state in %s)\n", paths.Socket, paths.StateDir)
		}
		c, err = control.Dial(paths.Socket)
		if err != nil {
			conn.close(stderr)
			return nil, err
		}
		conn.client = c
		return conn, nil
	}
	return nil, fmt.Errorf("no ltmd answered on %s, and starting one failed: %w", paths.Socket, lastErr)
}

// startEmbedded runs a daemon inside this process, logging to a file in
// its state directory.
func startEmbedded(paths control.Paths, start StartFunc) (*connection, error) {
	if err := os.MkdirAll(paths.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(paths.StateDir, embeddedLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedded ltmd log: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r, err := start(paths.Socket, paths.StateDir, logger)
	if err != nil {
		lf.Close()
		return nil, err
	}
	return &connection{embedded: r, logFile: lf}, nil
}

// embeddedLinger bounds how long an embedded daemon waits, after its own
// tmsh is done, for other shells that joined it to finish.
const embeddedLinger = 10 * time.Minute

// close ends the session, then stops the embedded daemon if there is one,
// once the other tmsh processes that joined it have left (saying so on
// stderr when it has to wait).
func (c *connection) close(stderr io.Writer) error {
	if c.client != nil {
		c.client.Close()
	}
	var err error
	if c.embedded != nil {
		err = c.embedded.StopWhenIdle(embeddedLinger, func(n int) {
			fmt.Fprintf(stderr, "openltm: waiting for %d other tmsh session(s) on the embedded ltmd to end\n", n)
		})
	}
	if c.logFile != nil {
		c.logFile.Close()
	}
	return err
}
