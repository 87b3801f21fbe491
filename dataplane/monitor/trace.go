package monitor

import (
	"context"
	"fmt"
	"strings"
)

// probeTrace gathers what one probe of a monitor with debug sent and
// received, for its trace line; a probe without one costs a context
// lookup per note.
type probeTrace struct{ notes []string }

type traceKey struct{}

// withTrace gives the probe under ctx a trace to note its exchange in.
func withTrace(ctx context.Context, t *probeTrace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// tracef notes one step of the probe's exchange when the probe is
// traced.
func tracef(ctx context.Context, format string, args ...any) {
	if t, ok := ctx.Value(traceKey{}).(*probeTrace); ok {
		t.notes = append(t.notes, fmt.Sprintf(format, args...))
	}
}

// maxTraced bounds how much of a payload a trace line quotes.
const maxTraced = 256

// quoted is a payload as a trace line shows it: Go-quoted, cut at
// maxTraced bytes.
func quoted(b []byte) string {
	if len(b) > maxTraced {
		return fmt.Sprintf("%q... (%d bytes)", b[:maxTraced], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// line is the probe's trace line: the monitor, the target, the steps
// and the verdict.
func (t *probeTrace) line(spec *Spec, target fmt.Stringer, out Outcome, err error) string {
	verdict := "up"
	switch {
	case err != nil:
		verdict = "down: " + err.Error()
	case !out.Up:
		verdict = "down: " + ErrNoMatch.Error()
	case out.Disabled:
		verdict = "up, disabled (recv-disable matched)"
	}
	steps := strings.Join(t.notes, "; ")
	if steps != "" {
		steps += "; "
	}
	return fmt.Sprintf("Monitor %s %s (%s): %s%s", spec.Name, target, spec.Type, steps, verdict)
}
