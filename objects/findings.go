package objects

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// Category sorts what reading a configuration found, by what BIG-IP would
// do with it.
type Category int

const (
	// Refused is what BIG-IP itself refuses: syntax errors, bytes that are
	// not text, a property F5 does not define for the kind, a bad value, a
	// reference to an object that exists nowhere, a name F5 does not allow.
	// One refused finding refuses the whole text; nothing is applied.
	Refused Category = 1
	// NotActedOn is what is valid on a BIG-IP and kept, listed and saved by
	// openltm, which does not act on it: kinds and modules F5 has and
	// openltm does not run, F5 properties openltm does not implement,
	// references to F5 built-in objects openltm does not ship. A strict load
	// refuses these too.
	NotActedOn Category = 2
)

func (c Category) String() string {
	if c == Refused {
		return "error"
	}
	return "warning"
}

// Finding is one thing reading found: where, which category, and the
// message in F5's words (with F5's message code where F5 has one).
type Finding struct {
	Pos      grammar.Pos
	Category Category
	Code     string // F5's message code, e.g. 01020036; "" when F5 has none
	Msg      string
	err      error // the error it was made from, if any
}

// String is "file:line:col: message", the message prefixed with F5's code
// the way BIG-IP prints it ("01020036:3: The requested ...").
func (f Finding) String() string {
	var b strings.Builder
	if f.Pos.Line > 0 {
		b.WriteString(f.Pos.String())
		b.WriteString(": ")
	}
	if f.Code != "" {
		b.WriteString(f.Code)
		b.WriteString(":3: ")
	}
	b.WriteString(f.Msg)
	return b.String()
}

// Findings is every finding of one read, in text order.
type Findings []Finding

// Refused lists the category 1 findings.
func (fs Findings) Refused() Findings { return fs.of(Refused) }

// NotActedOn lists the category 2 findings.
func (fs Findings) NotActedOn() Findings { return fs.of(NotActedOn) }

func (fs Findings) of(c Category) Findings {
	var out Findings
	for _, f := range fs {
		if f.Category == c {
			out = append(out, f)
		}
	}
	return out
}

// Err is the error that refuses the text: nil when nothing was refused. A
// strict read refuses what openltm would keep without acting on, too.
func (fs Findings) Err(strict bool) error {
	var bad Findings
	for _, f := range fs {
		if f.Category == Refused || strict {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &FindingsError{Findings: bad}
}

// FindingsError refuses a text for the findings it lists (the first one is
// its message; all are in Findings).
type FindingsError struct {
	Findings Findings
}

func (e *FindingsError) Error() string {
	s := e.Findings[0].String()
	if n := len(e.Findings) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// finding turns an error met while reading into a finding at its position.
func findingOf(err error, file string) Finding {
	f := Finding{Category: Refused, Msg: err.Error(), err: err}
	switch e := err.(type) {
	case *SyntaxError:
		// The position is printed in front; keep the message's own words.
		f.Pos, f.Msg = e.Pos, (&SyntaxError{Msg: e.Msg, Expected: e.Expected}).Error()
	case *grammar.Error:
		f.Pos, f.Msg = e.Pos, "Syntax Error: "+e.Msg
	case *positioned:
		f.Pos = e.pos
		if ce, ok := e.err.(*ConfigError); ok {
			f.Code, f.Msg = ce.Code, ce.Msg
		}
	case *ConfigError:
		f.Code, f.Msg = e.Code, e.Msg
	}
	if f.Pos.File == "" && f.Pos.Line > 0 {
		f.Pos.File = file
	}
	return f
}
