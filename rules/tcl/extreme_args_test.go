package tcl

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCommandsSurviveExtremeArguments runs every core command with up to
// three arguments drawn from numbers at the edges of int64 and beyond,
// indexes past end, huge counts in format strings and plain words (the
// ensembles with each subcommand first): none may panic, which Eval
// turns into an "internal error", or allocate much. Why: counts near 2^63
// once sliced out of range in binary scan and string first, and made
// binary format allocate gigabytes, where a rule runs on the daemon's
// event loops. All of one command's runs together may allocate no more
// than maxSweepAlloc. The loops (while, for), after and proc are left out: they
// run what they are given.
func TestCommandsSurviveExtremeArguments(t *testing.T) {
	cmds := NewCommands()
	subs := map[string][]string{
		"string": strings.Split("bytelength compare equal first index is last length map match range repeat replace reverse tolower totitle toupper trim trimleft trimright wordend wordstart", " "),
		"binary": {"format", "scan", "encode", "decode"},
		"array":  {"get", "set", "names", "size", "exists", "unset"},
		"info":   {"exists", "level", "commands", "procs", "vars", "globals", "locals", "args", "body", "default"},
	}
	vals := []string{"9223372036854775807", "-9223372036854775808", "99999999999999999999", "end+9223372036854775807", "end-9223372036854775808", "-1", "abc", "{}", "1e308", "%99999999999d", "a99999999999", "0"}
	for _, n := range cmds.Names() {
		switch n {
		case "after", "while", "for", "proc":
			continue
		}
		firsts := vals
		if s, ok := subs[n]; ok {
			firsts = s
		}
		lists := [][]string{nil}
		for _, a := range firsts {
			lists = append(lists, []string{a})
			for _, b := range vals {
				lists = append(lists, []string{a, b})
				for _, c := range vals {
					lists = append(lists, []string{a, b, c})
				}
			}
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, l := range lists {
			src := "catch {" + n + " " + strings.Join(l, " ") + "}"
			in := NewInterp(cmds)
			in.SleepBudget = 0
			in.SetBudget(10000, time.Time{}) // steps only: no wall-clock bound in a test
			s, err := in.Compile("sweep", src)
			if err != nil {
				continue
			}
			_, err = in.Eval(s)
			if err != nil { // catch takes every Tcl error: this is a panic
				t.Errorf("%s: %v", src, err)
			}
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if a := after.TotalAlloc - before.TotalAlloc; a > maxSweepAlloc {
			t.Errorf("%s: %d MiB allocated over its %d runs", n, a>>20, len(lists))
		}
	}
}

// maxSweepAlloc is what one command's runs with extreme arguments may
// allocate together: far more than they need (a few MiB), far less than
// one value sized by a count near 2^31.
const maxSweepAlloc = 256 << 20
