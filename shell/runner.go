package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/grammar"
)

// runner sends statements to the session and reports their results: output
// on out as it streams, each failure as one line on errw. Errors go to
// stderr so a script's output stays clean to pipe; the exit status tells a
// script whether anything failed.
type runner struct {
	sess   control.Session
	out    io.Writer
	errw   io.Writer
	failed bool
	quit   bool
	// lost is set when the daemon went away; nothing more can run.
	lost error
	// terminal reads the configuration of `load sys config ...
	// from-terminal`: the prompt's lines, or standard input.
	terminal func(context.Context) (string, error)
	// secret reads a password after prompt (prompt-for-password), without
	// echo at a terminal.
	secret func(ctx context.Context, prompt string) (string, error)
}

// lastPrompter is the cheap way to learn the prompt state after a command:
// the control client keeps the state each answer carried.
type lastPrompter interface{ LastPrompt() control.PromptState }

// run executes one statement. where prefixes its error message (a file
// name and line in batch mode, "" at the prompt).
func (r *runner) run(ctx context.Context, st statement, where string) {
	if r.lost != nil || r.quit {
		return
	}
	text := st.text
	w := &tailWriter{w: r.out}
	var pipe pipeline
	var piped *bytes.Buffer
	if cmd, filters, ok := grammar.SplitPipe(text); ok {
		var err error
		if pipe, err = parsePipeline(filters); err != nil {
			r.failed = true
			r.report(where, err)
			return
		}
		text, piped = cmd, new(bytes.Buffer)
		w = &tailWriter{w: piped}
	}
	var err error
	if what, ok := editTarget(text); ok {
		err = r.edit(ctx, what)
	} else if masterKeyPrompt(text) {
		err = r.masterKey(ctx, w) // password.go
	} else if words, ok := fromTerminal(text); ok && r.terminal != nil {
		var text string
		switch {
		case slices.Contains(words, "file"):
			err = errors.New(`Syntax Error: from-terminal and file cannot be given together: load sys config merge from-terminal, or load sys config merge file NAME`)
		default:
			if text, err = r.terminal(ctx); err == nil {
				err = r.loadText(ctx, words, text, w)
			}
		}
	} else {
		err = r.sess.Exec(ctx, text, w)
	}
	if pipe != nil {
		w = &tailWriter{w: r.out}
		writeFiltered(w, pipe, piped)
	}
	// Keep the prompt on its own line when output did not end one.
	if w.n > 0 && w.last != '\n' {
		fmt.Fprintln(r.out)
	}
	if err != nil {
		r.failed = true
		var applied *control.AppliedError
		switch {
		case errors.Is(err, control.ErrOutcomeUnknown):
			r.lost = err
			err = errors.New("connection to ltmd lost while this command ran; whether it took effect is unknown: see show sys config-history once ltmd answers again")
		case errors.Is(err, control.ErrDisconnected):
			r.lost = err
			err = errors.New("connection to ltmd lost; this command was not sent")
		case errors.As(err, &applied):
			// Interrupted, but the change is in: say so.
		case ctx.Err() != nil:
			// Whatever the daemon said about it, the user stopped it; the
			// daemon did not commit (it says so otherwise).
			err = context.Canceled
		}
		r.report(where, err)
	}
	if lp, ok := r.sess.(lastPrompter); ok {
		r.quit = lp.LastPrompt().Quit
	} else {
		r.quit = r.sess.Prompt().Quit
	}
}

// report prints one error line, prefixed by where it came from.
func (r *runner) report(where string, err error) {
	msg := err.Error()
	if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	msg = strings.TrimRight(msg, "\n")
	if where != "" {
		msg = where + ": " + msg
	}
	fmt.Fprintln(r.errw, msg)
}

// tailWriter remembers whether output ended with a newline.
type tailWriter struct {
	w    io.Writer
	n    int
	last byte
}

// Write passes p through and remembers its last byte.
func (t *tailWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.n += n
		t.last = p[n-1]
	}
	return n, err
}
