package shell

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/openltm/openltm/control"
)

// Exit statuses of tmsh.
const (
	ExitOK          = 0   // every command succeeded
	ExitFailed      = 1   // a command failed (the others still ran)
	ExitUsage       = 2   // bad flags, unreadable file, no daemon to be had
	ExitInterrupted = 130 // stopped by a signal
)

// historyFile is where the prompt's history lives in the state directory.
const historyFile = "tmsh_history"

// Options is tmsh's command line, parsed.
type Options struct {
	Socket   string   // --socket; "" means the default (see control.ResolvePaths)
	StateDir string   // --state-dir, for an embedded daemon and the history
	Command  string   // -c: statements separated by ';' or newlines
	File     string   // -f: a script; "-" is stdin
	Args     []string // trailing words: one command, as `tmsh list ltm pool`
	Quiet    bool     // -q: accepted for tmsh compatibility; tmsh prints no banner anyway

	// Stdin, Stdout and Stderr default to the process's own.
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// StartDaemon starts a daemon inside this process when none answers on
	// the socket; nil means tmsh only ever joins a running one. The shell
	// is a client of the control protocol and knows no daemon itself:
	// cmd/tmsh passes the one that runs ltmd's engine.
	StartDaemon StartFunc
}

// StartFunc starts a daemon serving the control protocol on socket, with
// its state in stateDir and its log on logger. It returns control.ErrInUse
// when another process claimed the socket first.
type StartFunc func(socket, stateDir string, logger *slog.Logger) (Embedded, error)

// Announcer is implemented by a started daemon that says itself how it
// runs (a background daemon that outlives tmsh, say), in the one line tmsh
// prints on stderr when it had to start one.
type Announcer interface {
	Announce(socket, stateDir string) string
}

// Embedded is a daemon this tmsh started: inside itself, or in the
// background (then StopWhenIdle leaves it running).
type Embedded interface {
	// StopWhenIdle stops it once the other shells that joined it have
	// left, waiting at most linger and calling waiting with how many are
	// left when it has to wait.
	StopWhenIdle(linger time.Duration, waiting func(n int)) error
}

// Run is all of tmsh after flag parsing: connect (or start an embedded
// daemon), then run the one-shot command, the script, the piped input or
// the interactive prompt, and return the exit status.
func Run(opts Options) int {
	stdin := opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	stdout := opts.Stdout
	if stdout == nil {
		stdout = os.Stdout
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if opts.Command != "" && opts.File != "" {
		fmt.Fprintln(stderr, "tmsh: -c and -f cannot be used together")
		return ExitUsage
	}
	if (opts.Command != "" || opts.File != "") && len(opts.Args) > 0 {
		fmt.Fprintf(stderr, "tmsh: unexpected arguments after -c or -f: %s\n", strings.Join(opts.Args, " "))
		return ExitUsage
	}

	var script io.Reader
	scriptName := ""
	switch {
	case opts.File == "-":
		script = stdin
	case opts.File != "":
		f, err := os.Open(opts.File)
		if err != nil {
			fmt.Fprintf(stderr, "tmsh: %v\n", err)
			return ExitUsage
		}
		defer f.Close()
		script, scriptName = f, opts.File
	}
	interactive := opts.Command == "" && opts.File == "" && len(opts.Args) == 0 && isTerminal(stdin) && isTerminal(stdout)
	if opts.Command == "" && opts.File == "" && len(opts.Args) == 0 && !interactive {
		script = stdin
	}

	paths := control.ResolvePaths(opts.StateDir, opts.Socket)
	conn, err := connect(paths, opts.StartDaemon, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tmsh: %v\n", err)
		return ExitUsage
	}
	defer func() {
		if err := conn.close(stderr); err != nil {
			fmt.Fprintf(stderr, "tmsh: %v\n", err)
		}
	}()

	if interactive {
		// A daemon that goes away is reached again (or started again)
		// before the next command; the prompt and its history stay.
		reconnect := func() (control.Session, error) {
			c, err := connect(paths, opts.StartDaemon, stderr)
			if err != nil {
				return nil, err
			}
			old := conn
			old.client.Close()
			if c.embedded == nil {
				c.embedded, c.logFile = old.embedded, old.logFile
			}
			conn = c
			return c.client, nil
		}
		return runInteractive(conn.client, reconnect, stdin.(*os.File), stdout, stderr, filepath.Join(paths.StateDir, historyFile))
	}

	// Batch: a signal stops the batch (the command in flight is cancelled)
	// and lets the deferred cleanup stop an embedded daemon properly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	b := &Batch{Session: conn.client, Stdout: stdout, Stderr: stderr, Stdin: stdin}
	switch {
	case opts.Command != "":
		b.RunText(ctx, opts.Command)
	case len(opts.Args) > 0:
		b.RunText(ctx, joinArgs(opts.Args))
	default:
		if err := b.RunReader(ctx, script, scriptName); err != nil {
			fmt.Fprintf(stderr, "tmsh: %v\n", err)
			return ExitUsage
		}
	}
	switch {
	case ctx.Err() != nil:
		return ExitInterrupted
	case b.Failed():
		return ExitFailed
	}
	return ExitOK
}

// isTerminal reports whether r or w is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// joinArgs rebuilds a command from the words the calling shell split, so
// `tmsh modify ltm pool p description "two words"` keeps its value whole:
// a word holding blanks is quoted again unless it is a brace block.
func joinArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\n;") && !strings.HasPrefix(strings.TrimSpace(a), "{") || a == "" {
			a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// runInteractive runs the prompt on the terminal. Whatever happens (quit,
// Ctrl-D, a signal, the daemon going away, a panic) the terminal settings
// saved here are put back before tmsh exits.
func runInteractive(sess *control.Client, reconnect func() (control.Session, error), in *os.File, stdout, stderr io.Writer, historyPath string) (status int) {
	fd := int(in.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		fmt.Fprintf(stderr, "tmsh: %v\n", err)
		return ExitUsage
	}
	defer term.Restore(fd, saved)
	defer func() {
		if r := recover(); r != nil {
			term.Restore(fd, saved)
			panic(r)
		}
	}()

	// SIGTERM and SIGHUP end the session cleanly; SIGINT (Ctrl-C while a
	// command runs, the terminal being cooked then) cancels that command.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	interrupts := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-sigs:
				if s == os.Interrupt || s == syscall.SIGQUIT {
					select {
					case interrupts <- struct{}{}:
					default:
					}
					continue
				}
				cancel()
				return
			}
		}
	}()

	hist := &history{path: historyPath}
	repl := &REPL{Session: sess, Stdout: stdout, Stderr: stderr, Interrupt: interrupts, History: hist.add, Reconnect: reconnect}
	ed, err := newEditor(fd, repl.Complete, hist.load())
	if err != nil {
		// A terminal without a controlling tty: plain line reading.
		repl.Reader = &plainReader{in: in, out: stdout}
	} else {
		repl.Reader = ed
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-winch:
					ed.Resized()
				}
			}
		}()
	}
	err = repl.Run(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "tmsh: %v\n", err)
		return ExitFailed
	case ctx.Err() != nil:
		return ExitInterrupted
	}
	return ExitOK
}
