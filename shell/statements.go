package shell

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// statement is one complete statement and the input line it starts on, so
// a batch error can say where in the file it came from.
type statement struct {
	text string
	line int
	col  int // where the statement starts on its line, from 1
}

// splitError is input no further text can fix (a stray "}"). It carries
// the absolute line and column so batch mode can name them.
type splitError struct {
	line, col int
	msg       string
}

// Error returns the message without a position; batch mode adds one.
func (e *splitError) Error() string { return e.msg }

// feeder turns a stream of input into complete statements. Text is fed a
// whole number of lines at a time; what is left open (a brace block, a
// quote, a trailing backslash) waits for the next feed.
type feeder struct {
	rest     string // unfinished statement text
	restLine int    // the line rest starts on
	line     int    // the line the next fed text starts on
}

func newFeeder() *feeder { return &feeder{line: 1, restLine: 1} }

// pending reports whether an unfinished statement is waiting for more lines.
func (f *feeder) pending() bool { return strings.TrimSpace(f.rest) != "" }

// pendingText is the unfinished statement, for completion and help.
func (f *feeder) pendingText() string { return f.rest }

// reset drops an unfinished statement (Ctrl-C at a continuation prompt).
func (f *feeder) reset() {
	f.rest = ""
	f.restLine = f.line
}

// feed adds text (ending at a line boundary) and returns the statements it
// completes, in order, with the errors met on the way. After an error the
// rest of the offending line is skipped and splitting resumes on the next.
func (f *feeder) feed(text string) ([]statement, []error) {
	src := f.rest + text
	base := f.restLine
	if f.rest == "" {
		base = f.line
	}
	f.line += strings.Count(text, "\n")
	var out []statement
	var errs []error
	// Each round consumes at least one line, so this bound is never reached
	// by correct splitting.
	rounds := strings.Count(src, "\n") + 2
	for range rounds {
		complete, rest, err := grammar.SplitStatements(src)
		cursor := 0
		for _, s := range complete {
			off := strings.Index(src[cursor:], s)
			if off < 0 { // cannot happen: statements are slices of src
				off = 0
			}
			off += cursor
			cursor = off + len(s)
			if strings.TrimSpace(s) == "" {
				continue
			}
			start := off + len(s) - len(strings.TrimLeft(s, " \t\r\n"))
			out = append(out, statement{text: strings.TrimSpace(s), line: base + strings.Count(src[:start], "\n"),
				col: start - strings.LastIndexByte(src[:start], '\n')})
		}
		if err == nil {
			f.rest = rest
			f.restLine = base + strings.Count(src[:len(src)-len(rest)], "\n")
			if rest == "" {
				f.restLine = f.line
			}
			return out, errs
		}
		// Skip to the line after the error and go on from there.
		at := cursor
		var ge *grammar.Error
		if errors.As(err, &ge) {
			at = max(ge.Pos.Offset, cursor)
			errs = append(errs, &splitError{line: base + ge.Pos.Line - 1, col: ge.Pos.Column, msg: ge.Msg})
		} else {
			errs = append(errs, &splitError{line: base + strings.Count(src[:at], "\n"), col: at - strings.LastIndexByte(src[:at], '\n'), msg: err.Error()})
		}
		nl := strings.IndexByte(src[at:], '\n')
		if nl < 0 {
			f.rest, f.restLine = "", f.line
			return out, errs
		}
		base += strings.Count(src[:at+nl+1], "\n")
		src = src[at+nl+1:]
	}
	f.rest, f.restLine = "", f.line
	return out, append(errs, fmt.Errorf("internal error: input could not be split"))
}

// finish returns what is still open at the end of input as a last
// statement: the daemon's parser then says precisely what is missing.
func (f *feeder) finish() []statement {
	if !f.pending() {
		return nil
	}
	st := statement{text: strings.TrimSpace(f.rest), line: f.restLine + leadingLines(f.rest), col: 1}
	f.reset()
	return []statement{st}
}

// leadingLines counts the blank lines before text starts.
func leadingLines(s string) int {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.Count(s[:len(s)-len(t)], "\n")
}

// currentStatement is the statement being typed at the end of text: what
// completion and `?` help must look at when a line holds several.
func currentStatement(text string) string {
	complete, rest, err := grammar.SplitStatements(text)
	if err != nil || rest != "" {
		return rest
	}
	if len(complete) == 0 {
		return text
	}
	// Complete up to the end: the last statement is still being typed
	// unless a terminator follows it.
	last := complete[len(complete)-1]
	if i := strings.LastIndex(text, last); i >= 0 {
		tail := text[i+len(last):]
		if strings.ContainsAny(tail, ";\n") {
			return strings.TrimLeft(tail[strings.LastIndexAny(tail, ";\n")+1:], " \t")
		}
		return text[i:]
	}
	return last
}
