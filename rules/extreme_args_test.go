package rules

import (
	"strings"
	"testing"
	"time"
)

// TestCommandsSurviveExtremeArguments runs every iRules command (the
// NAMESPACE:: ones) with up to four arguments drawn from numbers at the
// edges of int64, small ones, words and subcommand names, on a
// connection with a payload on each side: none may panic (which Eval
// turns into an "internal error") or take long. Why: a rule is the
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
					lists = append(lists, []string{a, b, c})
					for _, d := range []string{"9223372036854775807"} {
						lists = append(lists, []string{a, b, c, d})
					}
				}
			}
		}
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
				p := NewProgram(&Env{Log: logs.log}, r)
				c := newFakeConn()
				c.payload[0] = []byte("hello world payload")
				c.payload[1] = []byte("server side")
				s := p.NewConnState(c)
				st := time.Now()
				err := s.Run(ClientData)
				if d := time.Since(st); d > 200*time.Millisecond {
					t.Errorf("%s: took %v", body, d)
				}
				if err != nil && strings.Contains(err.Error(), "internal error") {
					t.Errorf("%s: %v", body, err)
				}
				s.Release()
			}()
		}
	}
}
