package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// terminalPrompt is what tmsh says before it reads a configuration typed
// or pasted after `load sys config merge from-terminal`.
const terminalPrompt = "Enter configuration. Press CTRL-D to submit or CTRL-C to cancel."

// fromTerminal reports whether a statement is `load sys config [merge]
// from-terminal [verify]`, and returns its words without from-terminal.
func fromTerminal(text string) ([]string, bool) {
	f := strings.Fields(text)
	if len(f) < 4 || f[0] != "load" || f[1] != "sys" || f[2] != "config" || !slices.Contains(f[3:], "from-terminal") {
		return nil, false
	}
	out := make([]string, 0, len(f)-1)
	for _, w := range f {
		if w != "from-terminal" {
			out = append(out, w)
		}
	}
	return out, true
}

// terminalName stands for the configuration read from the terminal in
// what ltmd says about it.
const terminalName = "(terminal)"

// loadText loads text as `load sys config ... file` loads a file: ltmd
// reads files and tmsh holds the text, so it goes through a temporary
// file, named "(terminal)" in ltmd's output and errors.
func (r *runner) loadText(ctx context.Context, words []string, text string, w io.Writer) error {
	f, err := os.CreateTemp("", "tmsh-terminal-*.conf")
	if err != nil {
		return err
	}
	name := f.Name()
	defer os.Remove(name)
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	cmd := strings.Join(words, " ") + " file " + grammar.Quote(name)
	if err := r.sess.Exec(ctx, cmd, &renameWriter{w: w, old: name, new: terminalName}); err != nil {
		return &renamedError{err: err, old: name, new: terminalName}
	}
	return nil
}

// renameWriter writes through to w with old replaced by new in each
// write (ltmd sends whole lines).
type renameWriter struct {
	w        io.Writer
	old, new string
}

func (rw *renameWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, strings.ReplaceAll(string(p), rw.old, rw.new)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// renamedError is err with old replaced by new in its message; errors.Is
// and As still see err (a lost connection stays one).
type renamedError struct {
	err      error
	old, new string
}

func (e *renamedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.old, e.new) }
func (e *renamedError) Unwrap() error { return e.err }

// readAllTerminal is the terminal of a batch run with -c or command words:
// standard input, to its end.
func readAllTerminal(in io.Reader, errw io.Writer) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		if in == nil {
			return "", errors.New("from-terminal: there is no standard input to read the configuration from")
		}
		if isTerminal(in) {
			fmt.Fprintln(errw, terminalPrompt)
		}
		b, err := io.ReadAll(in)
		return string(b), err
	}
}

// rawKeeper is a LineReader on a real terminal that can stay in raw mode
// over several line reads.
type rawKeeper interface {
	KeepRaw() (release func())
}

// readTerminal reads the configuration at the prompt: lines as typed or
// pasted (`?` and Tab are characters here, not help), until Ctrl-D;
// Ctrl-C abandons it.
func (r *REPL) readTerminal(ctx context.Context) (string, error) {
	// Raw before the prompt shows and until Ctrl-D: what is pasted at
	// once after the prompt, Ctrl-D included, reaches the editor as typed.
	if k, ok := r.Reader.(rawKeeper); ok {
		defer k.KeepRaw()()
	}
	fmt.Fprintln(r.Stdout, terminalPrompt)
	var b strings.Builder
	for {
		line, err := r.Reader.ReadLine(ctx, LinePrompt{Literal: true})
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if line.Interrupted {
			return "", context.Canceled
		}
		b.WriteString(line.Text)
		b.WriteByte('\n')
	}
}
