package monitor

import (
	"errors"
	"fmt"
	"strings"
)

// scriptStep is one line of a scripted monitor's script: a string to send,
// or one to expect; line is where the script says so, for errors.
type scriptStep struct {
	send bool
	text string
	line int
}

// ScriptError is a script that cannot run, with where: File:Line:Column
// (1-based; Column counts bytes) like the compilers an administrator
// knows, so the line to fix is named in the refused commit.
type ScriptError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("script %s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// CheckScript reports what stops a scripted monitor's script from
// running, so the daemon refuses a bad script when it is configured
// rather than marking members down at every probe.
func CheckScript(file, text string) error {
	_, err := parseScript(file, text)
	return err
}

// parseScript reads a scripted monitor's script. The language is the send/expect subset of
// BIG-IP's scripted monitor files, one command a line:
//
//	# a comment
//	expect "220"
//	send "HELO monitor.example\r\n"
//	expect "250"
//	send "QUIT\r\n"
//
// Choices [M]: the commands are send and expect, lower case; a string is
// double-quoted with the escapes \r \n \t \\ \" and \xHH; blank lines and
// lines starting with # are skipped, and a # after a command's string
// starts a comment; an expect string may not be empty; a script needs at
// least one command.
func parseScript(file, text string) ([]scriptStep, error) {
	var steps []scriptStep
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		errAt := func(col int, format string, args ...any) error {
			return &ScriptError{File: file, Line: i + 1, Column: col + 1, Msg: fmt.Sprintf(format, args...)}
		}
		p := skipBlank(line, 0)
		if p == len(line) || line[p] == '#' {
			continue
		}
		end := p
		for end < len(line) && line[end] != ' ' && line[end] != '\t' && line[end] != '"' {
			end++
		}
		st := scriptStep{line: i + 1}
		switch word := line[p:end]; word {
		case "send":
			st.send = true
		case "expect":
		default:
			return nil, errAt(p, "unknown command %q (a line is send \"STRING\" or expect \"STRING\")", word)
		}
		q := skipBlank(line, end)
		if q == len(line) || line[q] != '"' {
			return nil, errAt(q, "%s needs a double-quoted string", line[p:end])
		}
		s, next, err := scriptString(line, q)
		if err != nil {
			var se *ScriptError
			if errors.As(err, &se) {
				return nil, errAt(se.Column, "%s", se.Msg)
			}
			return nil, err
		}
		if r := skipBlank(line, next); r < len(line) && line[r] != '#' {
			return nil, errAt(r, "unexpected %q after the string (one command a line; # starts a comment)", line[r:])
		}
		if !st.send && s == "" {
			return nil, errAt(q, "expect needs a string to wait for, not \"\"")
		}
		st.text = s
		steps = append(steps, st)
	}
	if len(steps) == 0 {
		return nil, &ScriptError{File: file, Line: 1, Column: 1, Msg: "the script has no send or expect line"}
	}
	return steps, nil
}

func skipBlank(line string, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// scriptString reads the double-quoted string opening at line[q]: its
// value and the index just past its closing quote. An error's Column is
// the 0-based index of the fault.
func scriptString(line string, q int) (string, int, error) {
	var b strings.Builder
	for i := q + 1; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 == len(line) {
				return "", 0, &ScriptError{Column: i, Msg: "a \\ ends the line inside the string"}
			}
			switch e := line[i+1]; e {
			case 'r':
				b.WriteByte('\r')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(e)
			case 'x':
				if i+3 >= len(line) || unhex(line[i+2]) < 0 || unhex(line[i+3]) < 0 {
					return "", 0, &ScriptError{Column: i, Msg: "\\x needs two hex digits (\\x00 to \\xff)"}
				}
				b.WriteByte(byte(unhex(line[i+2])<<4 | unhex(line[i+3])))
				i += 2
			default:
				return "", 0, &ScriptError{Column: i, Msg: fmt.Sprintf("unknown escape \\%c (known: \\r \\n \\t \\\\ \\\" \\xHH)", e)}
			}
			i++
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, &ScriptError{Column: q, Msg: "the string is not closed (a \" ends it on the same line)"}
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
