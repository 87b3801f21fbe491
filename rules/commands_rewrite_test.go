package rules

import (
	"strings"
	"testing"
)

// TestRewritePayload: REWRITE::payload reads the rewritten body whole,
// its length, its first bytes and a range (clipped at the end), and
// replaces a range (the state then holds the new body); bad arguments
// and use outside REWRITE_RESPONSE_DONE are errors that leave the body
// as it was.
func TestRewritePayload(t *testing.T) {
	const body = "<html><title>Demo</title></html>"
	cases := []struct {
		name, script string
		want         string // ::r after the event
		payload      string // the body after the event
		err          string
	}{
		{name: "whole", script: `set ::r [REWRITE::payload]`, want: body, payload: body},
		{name: "length", script: `set ::r [REWRITE::payload length]`, want: "32", payload: body},
		{name: "first bytes", script: `set ::r [REWRITE::payload 6]`, want: "<html>", payload: body},
		{name: "first bytes past the end", script: `set ::r [REWRITE::payload 99]`, want: body, payload: body},
		{name: "range", script: `set ::r [REWRITE::payload 13 4]`, want: "Demo", payload: body},
		{name: "range past the end", script: `set ::r [REWRITE::payload 25 99]`, want: "</html>", payload: body},
		{name: "offset past the end", script: `set ::r [REWRITE::payload 40 2]`, want: "", payload: body},
		{name: "replace", script: `REWRITE::payload replace 13 4 "Online shop"; set ::r [REWRITE::payload length]`,
			want: "39", payload: strings.Replace(body, "Demo", "Online shop", 1)},
		{name: "replace to the end", script: `REWRITE::payload replace 25 99 ""; set ::r [REWRITE::payload]`,
			want: body[:25], payload: body[:25]},
		{name: "replace past the end", script: `REWRITE::payload replace 33 0 x`, err: "past the payload", payload: body},
		{name: "negative length", script: `REWRITE::payload 2 -1`, err: "0 or more", payload: body},
		{name: "not a number", script: `REWRITE::payload replace a 1 x`, err: "number of bytes", payload: body},
		{name: "too many arguments", script: `REWRITE::payload 1 2 3`, err: "wrong # args", payload: body},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "rw", "when REWRITE_RESPONSE_DONE {\n"+c.script+"\n}"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.SetRewrite()
			st := s.Rewrite()
			st.Payload = []byte(body)
			err := s.Run(RewriteResponseDone)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got, _ := s.Var("r"); got != c.want {
				t.Errorf("r = %q, want %q", got, c.want)
			}
			if string(st.Payload) != c.payload || st.Replaced != (c.payload != body) {
				t.Errorf("payload %q (replaced %v), want %q", st.Payload, st.Replaced, c.payload)
			}
		})
	}
}

// TestRewritePostProcess: REWRITE::post_process reads 0 until turned on,
// takes 0/1 and Tcl booleans, refuses anything else; the host takes the
// switch once per request; REWRITE::payload is refused outside
// REWRITE_RESPONSE_DONE, and every REWRITE:: command on a virtual
// without a rewrite profile.
func TestRewritePostProcess(t *testing.T) {
	cases := []struct {
		script, want, err string
		on                bool
	}{
		{script: `set ::r [REWRITE::post_process]`, want: "0"},
		{script: `REWRITE::post_process 1; set ::r [REWRITE::post_process]`, want: "1", on: true},
		{script: `REWRITE::post_process on; REWRITE::post_process false; set ::r [REWRITE::post_process]`, want: "0"},
		{script: `REWRITE::post_process maybe`, err: "expected 0 or 1"},
		{script: `REWRITE::post_process 1 2`, err: "wrong # args"},
		{script: `REWRITE::payload`, err: "only valid in REWRITE_RESPONSE_DONE"},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "rw", "when REWRITE_REQUEST_DONE {\n"+c.script+"\n}"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if err := s.Run(RewriteRequestDone); c.err != "wrong # args" && (err == nil || !strings.Contains(err.Error(), "no rewrite profile")) {
				t.Fatalf("without a profile: %v", err)
			}
			s.SetRewrite()
			err := s.Run(RewriteRequestDone)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Var("r"); got != c.want {
				t.Errorf("r = %q, want %q", got, c.want)
			}
			if got := s.Rewrite().TakePostProcess(); got != c.on {
				t.Errorf("taken %v, want %v", got, c.on)
			}
			if s.Rewrite().TakePostProcess() {
				t.Error("taken twice")
			}
		})
	}
}
