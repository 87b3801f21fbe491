package tcl

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestValueSizeLimits: a command asked for a value past maxValueLen (or
// a format field past maxFormatWidth) refuses it at once with Tcl's
// message, where tclsh allocates gigabytes, crashes, or (for counts that
// overflow) where this interpreter used to panic; below the limits the
// answers are tclsh's.
func TestValueSizeLimits(t *testing.T) {
	const tooLargeMsg = "result exceeds max size for a Tcl value"
	half := strconv.Itoa(maxValueLen / 2)
	for _, c := range []struct {
		script, want, err string
	}{
		{"string length [string repeat ab " + half + "]", strconv.Itoa(maxValueLen), ""},
		{"string repeat ab " + strconv.Itoa(maxValueLen/2+1), "", tooLargeMsg},
		{"string repeat ab 4611686018427387904", "", tooLargeMsg},
		{"string repeat ab 9223372036854775807", "", tooLargeMsg},
		{"string repeat {} 9223372036854775807", "", ""},
		{"string length [binary format a" + strconv.Itoa(maxValueLen) + " x]", strconv.Itoa(maxValueLen), ""},
		{"binary format a" + strconv.Itoa(maxValueLen+1) + " x", "", tooLargeMsg},
		{"binary format b3333333333 0", "", tooLargeMsg},
		{"binary format a99999999999999999999 x", "", tooLargeMsg},
		{"binary format x9223372036854775807", "", tooLargeMsg},
		{"binary format @99999999999999999999", "", tooLargeMsg},
		{"binary format a1@" + strconv.Itoa(maxValueLen+1) + " x", "", tooLargeMsg},
		{"string first a abc 9223372036854775807", "-1", ""},
		{"string first bc abc 1", "1", ""},
		{"string length [format %1000000s x]", "1000000", ""},
		{"format %1000001s x", "", tooLargeMsg},
		{"format %99999999999999999999s x", "", tooLargeMsg},
		{"format %.2000000f 1", "", tooLargeMsg},
		{"format %*s 1000001 x", "", tooLargeMsg},
		{"format %*s -9223372036854775808 x", "", tooLargeMsg},
		{"format %.*f 1000001 1", "", tooLargeMsg},
		{"format {%9223372036854775807$s} x", "", "argument index out of range"},
		{"format {%99999999999999999999$s} x", "", "argument index out of range"},
		{"scan abc {%99999999999999999999$s}", "", "argument index out of range"},
		{"scan abc {%" + strconv.Itoa(maxScanSlots+1) + "$s}", "", "argument index out of range"},
		{"llength [scan abc {%" + strconv.Itoa(maxScanSlots) + "$s}]", strconv.Itoa(maxScanSlots), ""},
		{"scan abc {%9223372036854775807s} v", "1", ""},
	} {
		in := NewInterp(NewCommands())
		in.SetBudget(1000, time.Time{}) // steps only: no wall-clock bound in a test
		v, err := in.EvalString(c.script)
		short := c.script
		if len(short) > 60 {
			short = short[:60] + "…"
		}
		checkResult(t, short, v, err, c.want, c.err)
	}
}

// TestPanicInCommand: a command whose Go code panics ends the script
// with an internal error carrying the stack, and the interpreter serves
// the next script from the global level with its variables kept.
func TestPanicInCommand(t *testing.T) {
	cmds := NewCommands()
	cmds.Register("boom", func(*Interp, []Value) (Value, error) {
		var s []int
		return Int(int64(s[3])), nil // index out of range
	})
	in := NewInterp(cmds)
	setup, err := in.Compile("setup", "set g 1; proc p {} { set local 2; boom }")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Eval(setup); err != nil {
		t.Fatal(err)
	}
	run, err := in.Compile("run", "p")
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.Eval(run)
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "internal error: runtime error: index out of range") || !strings.Contains(te.Stack, "TestPanicInCommand") {
		t.Fatalf("err = %v (%+v), want an internal error with the stack", err, te)
	}
	after, err := in.Compile("after", "list $g [info exists local] [info level]")
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.Eval(after)
	if err != nil || v.String() != "1 0 0" {
		t.Errorf("after the panic: %q %v, want \"1 0 0\" (global level, variables kept)", v.String(), err)
	}
}
