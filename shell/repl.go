package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/grammar"
)

// LineReader is the line editor behind the interactive prompt. The real
// one drives go-prompt on the terminal; tests script one. Keeping the
// editor behind this seam keeps the REPL's logic (statements spanning
// lines, help, quitting, interrupts) testable without a terminal.
type LineReader interface {
	// ReadLine shows p and returns the next line typed. It returns io.EOF
	// when the user asks to leave (Ctrl-D on an empty line), and ctx's
	// error when ctx ends while waiting.
	ReadLine(ctx context.Context, p LinePrompt) (Line, error)
}

// LinePrompt is what ReadLine shows: Text, and Primary, the prompt to
// switch to if Ctrl-C abandons the open block Text continues.
type LinePrompt struct {
	Text    string
	Primary string
	// Literal reads data, not commands (load sys config from-terminal):
	// `?` is a character, not help, and Tab completes nothing.
	Literal bool
}

// Line is one answer of the editor.
type Line struct {
	// Text is the line typed, or for Help the text before the cursor.
	Text string
	// Help means `?` was typed: show help for Text. The editor keeps the
	// line being edited and shows it again on the next ReadLine.
	Help bool
	// Interrupted means Ctrl-C was pressed while this line was read: a
	// block left open on earlier lines is abandoned before Text is taken.
	Interrupted bool
}

// REPL is the interactive loop: read a line, run what it completes, show
// the prompt the session is now in.
type REPL struct {
	Session control.Session
	Reader  LineReader
	Stdout  io.Writer
	Stderr  io.Writer
	// Interrupt delivers Ctrl-C (SIGINT) while a command runs: it cancels
	// that command only. Nil means commands cannot be interrupted.
	Interrupt <-chan struct{}
	// History, when set, records every line typed.
	History func(line string)
	// Reconnect, when set, opens a new session after the daemon went away
	// (dialling it again, or starting one as at startup): the REPL says
	// once that the daemon is gone, reconnects before the next command and
	// keeps the user's folder and module. Nil makes a lost daemon end Run.
	Reconnect func() (control.Session, error)

	feeder *feeder
	// lostSaid is set once the loss of the daemon has been reported, so
	// that failed reconnections do not repeat it.
	lostSaid bool
}

// live reports whether the session can take a command, reconnecting when
// the daemon went away and Reconnect is set.
func (r *REPL) live(ctx context.Context, run *runner) bool {
	gone := run.lost != nil
	if !gone {
		if a, ok := r.Session.(interface{ Alive() bool }); ok && !a.Alive() {
			gone = true
		}
	}
	if !gone {
		return true
	}
	if r.Reconnect == nil {
		if run.lost == nil {
			run.lost = control.ErrDisconnected
		}
		return false
	}
	if !r.lostSaid {
		fmt.Fprintln(r.Stderr, "openltm: ltmd went away; reconnecting")
		r.lostSaid = true
	}
	was := r.Session.Prompt()
	s, err := r.Reconnect()
	if err != nil {
		fmt.Fprintf(r.Stderr, "openltm: cannot reach ltmd (%v); the command was not sent; press Enter to try again\n", err)
		return false
	}
	// Back to where the user was: folder and module. An open cli
	// transaction lived in the daemon and is gone.
	if was.Folder != "" && was.Folder != s.Prompt().Folder {
		s.Exec(ctx, "cd "+was.Folder, io.Discard)
	}
	if was.Module != "" {
		for _, m := range strings.Split(was.Module, ".") {
			s.Exec(ctx, m, io.Discard)
		}
	}
	note := ""
	if was.InTransaction {
		note = "; the open cli transaction was lost with it"
	}
	fmt.Fprintf(r.Stderr, "openltm: reconnected to ltmd%s\n", note)
	r.Session, run.sess, run.lost, r.lostSaid = s, s, nil, false
	return true
}

// Run loops until the user leaves (quit, exit at the top, Ctrl-D), ctx
// ends, or the daemon goes away; only the last is an error.
func (r *REPL) Run(ctx context.Context) error {
	r.feeder = newFeeder()
	run := &runner{sess: r.Session, out: r.Stdout, errw: r.Stderr, terminal: r.readTerminal, secret: r.readSecret}
	for {
		primary := PromptString(r.Session.Prompt())
		if e, ok := r.Session.(interface{ Err() error }); ok && e.Err() != nil && r.Reconnect == nil {
			return e.Err() // the daemon went away between commands
		}
		p := LinePrompt{Text: primary, Primary: primary}
		if r.feeder.pending() {
			p.Text = continuationPrompt
		}
		line, err := r.Reader.ReadLine(ctx, p)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		if line.Interrupted {
			r.feeder.reset()
		}
		if line.Help {
			r.help(line.Text)
			continue
		}
		if r.History != nil {
			r.History(line.Text)
		}
		sts, errs := r.feeder.feed(line.Text + "\n")
		for _, e := range errs {
			run.report("", e)
		}
		for _, st := range sts {
			if !r.live(ctx, run) {
				if r.Reconnect == nil {
					return run.lost
				}
				break // not sent; the user may try again
			}
			r.exec(ctx, run, st)
			if run.lost != nil && r.Reconnect == nil {
				return run.lost
			}
			if run.quit {
				return nil
			}
		}
	}
}

// Complete is what the editor's Tab completion calls with the text before
// the cursor: the session's suggestions for the statement being typed,
// including lines of a block typed before this one.
func (r *REPL) Complete(before string) []control.Suggestion {
	text := before
	if r.feeder != nil && r.feeder.pending() {
		text = r.feeder.pendingText() + before
	}
	current := currentStatement(text)
	if _, filters, ok := grammar.SplitPipe(current); ok {
		return pipeSuggestions(filters)
	}
	return r.Session.Complete(current)
}

// help prints `?` help for the statement being typed.
func (r *REPL) help(before string) {
	current := currentStatement(r.feeder.pendingText() + before)
	suggestions := func() []control.Suggestion { return r.Session.Complete(current) }
	if _, filters, ok := grammar.SplitPipe(current); ok {
		suggestions = func() []control.Suggestion { return pipeSuggestions(filters) }
	}
	if WriteHelp(r.Stdout, suggestions(), partialWord(current)) == 0 {
		fmt.Fprintln(r.Stdout, "No help is available here.")
	}
}

// confirmReset asks, as tmsh does at a terminal, before a statement that
// replaces the whole configuration with the defaults. Scripts and -c do
// not ask.
func (r *REPL) confirmReset(ctx context.Context, st statement) bool {
	f := strings.Fields(st.text)
	if len(f) < 4 || f[0] != "load" || f[1] != "sys" || f[2] != "config" || !slices.Contains(f[3:], "default") || slices.Contains(f[3:], "verify") {
		return true
	}
	q := "Reset the running configuration to the default (all objects are deleted)? (y/n) "
	line, err := r.Reader.ReadLine(ctx, LinePrompt{Text: q, Primary: q})
	if err == nil && !line.Help {
		switch strings.ToLower(strings.TrimSpace(line.Text)) {
		case "y", "yes":
			return true
		}
	}
	fmt.Fprintln(r.Stdout, "Nothing was changed.")
	return false
}

// exec runs one statement; Ctrl-C while it runs cancels only it.
func (r *REPL) exec(ctx context.Context, run *runner, st statement) {
	if !r.confirmReset(ctx, st) {
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.Interrupt != nil {
		done := make(chan struct{})
		defer close(done)
		// Drop a Ctrl-C left over from before this command.
		select {
		case <-r.Interrupt:
		default:
		}
		go func() {
			select {
			case <-r.Interrupt:
				cancel()
			case <-done:
			}
		}()
	}
	run.run(cctx, st, "")
}
