package rules

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCommandsSurviveExtremeArguments runs every iRules command (the
// NAMESPACE:: ones) with up to four arguments drawn from numbers at the
// edges of int64, small ones, words and subcommand names, on a
// connection with a payload on each side: none may panic (which Eval
// turns into an "internal error"), and all of one command's runs
// together may allocate no more than maxSweepAlloc. Why: a rule is the
// user's code on the daemon's event loops; `TCP::payload 1 <2^63-1>`
// once sliced out of range there.
func TestCommandsSurviveExtremeArguments(t *testing.T) {
	names := commandTable().Names()
	vals := []string{"9223372036854775807", "-9223372036854775808", "1", "-1", "abc", "replace", "length", "end+9223372036854775807"}
	for _, name := range names {
		if !strings.Contains(name, "::") {
			continue
		}
		var lists [][]string
		lists = append(lists, nil)
		for _, a := range vals {
			lists = append(lists, []string{a})
			for _, b := range vals {
				lists = append(lists, []string{a, b})
				for _, c := range vals {
					lists = append(lists, []string{a, b, c}, []string{a, b, c, "9223372036854775807"})
				}
			}
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, l := range lists {
			body := "when CLIENT_DATA { catch {" + name + " " + strings.Join(l, " ") + "} }"
			r, err := Compile("/Common/sweep", body)
			if err != nil {
				continue
			}
			func() {
				defer func() {
					if rec := recover(); rec != nil {
						t.Errorf("%s: panic %v", body, rec)
					}
				}()
				logs := &logSink{}
				// A day per event: the steps bound the rule, not the machine's speed.
				p := NewProgram(&Env{Log: logs.log, Timeout: 24 * time.Hour}, r)
				c := newFakeConn()
				c.payload[0] = []byte("hello world payload")
				c.payload[1] = []byte("server side")
				s := p.NewConnState(c)
				err := s.Run(ClientData)
				if err != nil && strings.Contains(err.Error(), "internal error") {
					t.Errorf("%s: %v", body, err)
				}
				s.Release()
			}()
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if a := after.TotalAlloc - before.TotalAlloc; a > maxSweepAlloc {
			t.Errorf("%s: %d MiB allocated over its %d runs", name, a>>20, len(lists))
		}
	}
}

// maxSweepAlloc is what one command's runs with extreme arguments may
// allocate together: far more than they need (a few MiB), far less than
// one value sized by a count near 2^31.
const maxSweepAlloc = 256 << 20
