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

	r *runner
}

func (b *Batch) runner() *runner {
	if b.r == nil {
		b.r = &runner{sess: b.Session, out: b.Stdout, errw: b.Stderr}
	}
	return b.r
}

// Failed reports whether any statement run so far failed.
func (b *Batch) Failed() bool { return b.runner().failed }

// Done reports whether the batch must stop: the session quit, the daemon
// went away, or ctx ended.
func (b *Batch) Done(ctx context.Context) bool {
	r := b.runner()
	return r.quit || r.lost != nil || ctx.Err() != nil
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
		r.run(ctx, sts[0], where(sts[0]))
		sts = sts[1:]
	}
}
