package objects

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// SyntaxError is bad text input: what was wrong, where, and what would have
// been valid. Its text starts the way tmsh's does ("Syntax Error: ...") so
// scripts that match on it keep working.
type SyntaxError struct {
	Pos      grammar.Pos
	Msg      string
	Expected []string
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString("Syntax Error: ")
	b.WriteString(e.Msg)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, " (at %s", e.Pos)
		if len(e.Expected) > 0 {
			b.WriteString("; expected ")
			// In a file there is no prompt to type `?` at.
			b.WriteString(expectList(e.Expected, e.Pos.File == ""))
		}
		b.WriteString(")")
	} else if len(e.Expected) > 0 {
		b.WriteString(" (expected ")
		b.WriteString(expectList(e.Expected, true))
		b.WriteString(")")
	}
	return b.String()
}

func expectList(xs []string, prompt bool) string {
	const max = 14
	if len(xs) == 1 {
		return xs[0]
	}
	if len(xs) > max {
		if !prompt {
			return "one of: " + strings.Join(xs[:max], ", ") + fmt.Sprintf(", ... (%d in all)", len(xs))
		}
		return "one of: " + strings.Join(xs[:max], ", ") + fmt.Sprintf(", ... (%d in all; type ? for the full list)", len(xs))
	}
	return "one of: " + strings.Join(xs, ", ")
}

func synErr(n grammar.Node, expected []string, format string, args ...any) *SyntaxError {
	e := &SyntaxError{Msg: fmt.Sprintf(format, args...), Expected: expected}
	if n != nil {
		e.Pos = n.Position()
	}
	return e
}

// ConfigError is a BIG-IP style configuration error with its message code,
// e.g. 01020036:3: The requested pool (/Common/x) was not found.
type ConfigError struct {
	Code string
	Msg  string
}

func (e *ConfigError) Error() string { return e.Code + ":3: " + e.Msg }

// NotFound is BIG-IP's 01020036 error.
func NotFound(k *Kind, name string) error {
	lower := "object"
	if k != nil {
		lower = k.Lower
	}
	return &ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested %s (%s) was not found.", lower, name)}
}

// Exists is BIG-IP's 01020066 error.
func Exists(k *Kind, name string) error {
	title := "object"
	if k != nil {
		title = k.Title
	}
	return &ConfigError{Code: "01020066", Msg: fmt.Sprintf("The requested %s (%s) already exists in partition %s.", title, name, Partition(name))}
}

// InUse is the refusal to delete an object something still references.
// A singleton (the global settings) has no name: its kind's words stand
// for it.
func InUse(k *Kind, name string, by *Object) error {
	byName := by.Name
	if byName == "" {
		byName = by.Kind.Key()
	}
	return &ConfigError{Code: "01070265", Msg: fmt.Sprintf("The %s (%s) cannot be deleted because it is in use by a %s (%s).", k.Title, name, by.Kind.Title, byName)}
}

// Invalid is BIG-IP's general 01070734 configuration error.
func Invalid(format string, args ...any) error {
	return &ConfigError{Code: "01070734", Msg: "Configuration error: " + fmt.Sprintf(format, args...)}
}
