package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/control"
)

// Batch runs scripts without a prompt: -c text, -f files and piped stdin
// all go through it. It keeps going after a failed command, as tmsh does in
// batch mode, stops at `quit` (or `exit` at the top level) and when the
// daemon goes away.
type Batch struct {
	Session control.Session
	Stdout  io.Writer
	Stderr  io.Writer
	// Stdin is where `load sys config ... from-terminal` in -c text or
	// command words reads its configuration (in a script, the rest of
	// the script is the configuration).
	Stdin io.Reader

	r *runner
	// rest, while a script stream runs, takes everything the stream has
	// not yet run; drained is set once it has.
	rest    func() (string, error)
	drained bool
}

func (b *Batch) runner() *runner {
	if b.r == nil {
		b.r = &runner{sess: b.Session, out: b.Stdout, errw: b.Stderr, terminal: readAllTerminal(b.Stdin, b.Stderr), secret: lineSecrets(b.Stdin, b.Stderr)}
	}
	return b.r
}

// Failed reports whether any statement run so far failed.
func (b *Batch) Failed() bool { return b.runner().failed }

// Done reports whether the batch must stop: the session quit, the daemon
// went away, or ctx ended.
func (b *Batch) Done(ctx context.Context) bool {
	r := b.runner()
	return r.quit || r.lost != nil || b.drained || ctx.Err() != nil
}

// RunText runs every statement of text, as given to -c or as trailing
// arguments. Errors are located as in a file, source:line:col, with
// source "-c".
func (b *Batch) RunText(ctx context.Context, text string) {
	f := newFeeder()
	sts, errs := f.feed(text + "\n")
	where := whereIn("-c")
	b.runAll(ctx, sts, errs, where)
	b.runAll(ctx, f.finish(), nil, where)
}

// whereIn locates a statement's errors in source: "source:line:col", the
// same for -c text, a file and standard input.
func whereIn(source string) func(statement) string {
	return func(st statement) string {
		return fmt.Sprintf("%s:%d:%d", source, st.line, max(st.col, 1))
	}
}

// RunReader runs a script read from in as it arrives, so a slow pipe (a
// program feeding tmsh) sees each statement run as soon as it is complete.
// name labels errors ("script.tmsh:12:1: ..."); "" is standard input,
// labelled "-".
func (b *Batch) RunReader(ctx context.Context, in io.Reader, name string) error {
	if name == "" {
		name = "-"
	}
	where := whereIn(name)
	f := newFeeder()
	br := bufio.NewReaderSize(in, 64<<10)
	buf := make([]byte, 64<<10)
	var partial strings.Builder // text after the last newline read
	// `load sys config merge from-terminal` in a script (a pasted .scf
	// file): the rest of the script is the configuration, as what
	// follows it is on a terminal.
	b.rest = func() (string, error) {
		text := f.pendingText() + partial.String()
		f.reset()
		partial.Reset()
		more, err := io.ReadAll(br)
		return text + string(more), err
	}
	defer func() { b.rest = nil }()
	for !b.Done(ctx) {
		n, err := br.Read(buf)
		if n > 0 {
			partial.Write(buf[:n])
			text := partial.String()
			if i := strings.LastIndexByte(text, '\n'); i >= 0 {
				partial.Reset()
				partial.WriteString(text[i+1:])
				sts, errs := f.feed(text[:i+1])
				b.runAll(ctx, sts, errs, where)
			}
		}
		if errors.Is(err, io.EOF) {
			if partial.Len() > 0 {
				sts, errs := f.feed(partial.String() + "\n")
				b.runAll(ctx, sts, errs, where)
			}
			b.runAll(ctx, f.finish(), nil, where)
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *Batch) runAll(ctx context.Context, sts []statement, errs []error, where func(statement) string) {
	r := b.runner()
	// Report split errors in line order among the statements around them.
	for len(sts) > 0 || len(errs) > 0 {
		if b.Done(ctx) {
			return
		}
		if len(errs) > 0 {
			line, col := 0, 0
			var se *splitError
			if errors.As(errs[0], &se) {
				line, col = se.line, se.col
			}
			if len(sts) == 0 || line <= sts[0].line {
				r.failed = true
				r.report(where(statement{line: line, col: col}), errs[0])
				errs = errs[1:]
				continue
			}
		}
		if words, ok := fromTerminal(sts[0].text); ok && b.rest != nil {
			b.loadRest(ctx, sts[0], words, sts[1:], where)
			return
		}
		r.run(ctx, sts[0], where(sts[0]))
		sts = sts[1:]
	}
}

// loadRest runs `load sys config ... from-terminal` in a script stream on
// what follows it: the statements already split after it, and the rest
// of the stream. The stream is then done.
func (b *Batch) loadRest(ctx context.Context, st statement, words []string, after []statement, where func(statement) string) {
	r := b.runner()
	var text strings.Builder
	for _, s := range after {
		text.WriteString(s.text)
		text.WriteByte('\n')
	}
	more, err := b.rest()
	b.drained = true
	if err != nil {
		r.failed = true
		r.report(where(st), err)
		return
	}
	text.WriteString(more)
	stdin := r.terminal
	r.terminal = func(context.Context) (string, error) { return text.String(), nil }
	r.run(ctx, st, where(st))
	r.terminal = stdin
}
