// Command tmsh is openltm's shell: interactive on a terminal, a batch
// runner for -c, -f and piped scripts. See USAGE.md. It wires the shell
// (a pure client) to ltmd's engine, which it starts inside itself when no
// daemon answers.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/openltm/openltm/daemon"
	"github.com/openltm/openltm/shell"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == runLtmdArg {
		os.Exit(runLtmd(os.Args[2:], os.Stderr))
	}
	o := shell.Options{StartDaemon: startBackground}
	embedded := false
	fs := flag.NewFlagSet("tmsh", flag.ContinueOnError)
	fs.StringVar(&o.Socket, "socket", "", "ltmd's control socket (default $OPENLTM_SOCKET, else a per-user path)")
	fs.StringVar(&o.StateDir, "state-dir", "", "state directory for an embedded ltmd and the history (default $OPENLTM_STATE_DIR, else ~/.local/state/openltm)")
	fs.StringVar(&o.Command, "c", "", "run these statements (separated by ';' or newlines) and exit")
	fs.StringVar(&o.File, "f", "", "run the statements in this file ('-' for stdin) and exit")
	fs.BoolVar(&o.Quiet, "q", false, "quiet (accepted for tmsh compatibility)")
	fs.BoolVar(&ownNamespace, "own-namespace", false, "the ltmd this tmsh starts (embedded or in the background) owns its network namespace, as ltmd --own-namespace: wildcard virtual servers are served; run so only in a network namespace of its own")
	fs.BoolVar(&embedded, "embedded", false, "when no ltmd answers, run one inside this tmsh that stops with it (default: start one in the background that outlives tmsh)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: tmsh [--socket PATH] [--state-dir DIR] [--embedded] [--own-namespace] [-q] [-c 'cmd; cmd' | -f FILE | command words...]

tmsh is openltm's shell: interactive on a terminal, a batch runner for -c,
-f, command words and piped scripts. When no ltmd answers on the socket it
starts one in the background, which keeps running after tmsh exits (its
log is ltmd.log in the state directory; stop it with kill), or inside
itself with --embedded.

Exit status: 0 when every command succeeded, 1 when one failed, 2 for
usage errors or when ltmd cannot be reached, 130 when interrupted.

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(shell.ExitOK)
		}
		os.Exit(shell.ExitUsage)
	}
	o.Args = fs.Args()
	if embedded {
		o.StartDaemon = startDaemon
	}
	os.Exit(shell.Run(o))
}

// ownNamespace is --own-namespace: the ltmd tmsh starts, inside itself
// or in the background, is given daemon.Options.OwnNamespace.
var ownNamespace bool

// startDaemon runs ltmd's engine inside tmsh when no daemon answers, so
// that tmsh works on its own; the shell package itself is only a client.
func startDaemon(socket, stateDir string, logger *slog.Logger) (shell.Embedded, error) {
	r, err := daemon.Start(daemon.Options{StateDir: stateDir, Logger: logger, BusyPoll: daemon.DefaultBusyPoll, OwnNamespace: ownNamespace}, socket)
	if err != nil {
		return nil, err // not a nil *Running in a non-nil interface
	}
	return r, nil
}
