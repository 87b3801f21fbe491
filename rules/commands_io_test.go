package rules

import (
	"strings"
	"testing"
)

// TestIOCommandErrors checks what ifile, HSL and log refuse, and that the
// refusals are Tcl errors a rule can catch.
func TestIOCommandErrors(t *testing.T) {
	cases := []struct{ script, want string }{
		{`ifile get nosuch`, `ifile nosuch: no such ltm ifile`},
		{`ifile size maint.html`, `bad option "size"`},
		{`ifile get`, `wrong # args`},
		{`ifile listall x`, `wrong # args`},
		{`HSL::open -proto SCTP -pool syslog_pool`, `bad protocol "SCTP": must be UDP or TCP`},
		{`HSL::open -proto UDP`, `wrong # args`},
		{`HSL::open -proto UDP -pool nosuch_pool`, `no such pool: nosuch_pool`},
		{`HSL::open -pool syslog_pool -timeout 3`, `bad option "-timeout"`},
		{`HSL::send notahandle text`, `invalid HSL handle`},
		{`log not-an-address local0. text`, `bad log destination "not-an-address"`},
		{`log local0 text`, `bad log facility "local0"`},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			r := mustCompile(t, "/Common/r", "when HTTP_REQUEST {\n set rc [catch {"+c.script+"} err]\n log local0. \"$rc $err\"\n}")
			logs := &logSink{}
			p := NewProgram(publishedEnv(t, logs, &hslFake{}), r)
			s := p.NewConnState(newHTTPFake(t, testRequest, ""))
			defer s.Release()
			if err := s.Run(HTTPRequest); err != nil {
				t.Fatal(err)
			}
			if len(logs.lines) != 1 || !strings.Contains(logs.lines[0], ": 1 ") || !strings.Contains(logs.lines[0], c.want) {
				t.Errorf("log %q; want a caught error containing %q", logs.lines, c.want)
			}
		})
	}
}

// TestHSLWithoutSender: a runtime without HSL (a check, a test engine)
// makes HSL::open a Tcl error rather than silently dropping.
func TestHSLWithoutSender(t *testing.T) {
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED { HSL::open -proto UDP -pool p }")
	p := NewProgram(&Env{}, r)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "high-speed logging is not available") {
		t.Fatalf("err %v", err)
	}
	if refs := r.Refs(); len(refs) != 1 || refs[0].Kind != "pool" || refs[0].Name != "p" {
		t.Errorf("refs %+v; want the -pool name", refs)
	}
}
