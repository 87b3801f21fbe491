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
		{`HSL::open -proto [string toupper sctp] -pool syslog_pool`, `bad protocol "SCTP": must be UDP or TCP`},
		{`HSL::open -proto [string tolower UDP] -pool syslog_pool`, `bad protocol "udp"`},
		{`HSL::open -proto UDP`, `wrong # args`},
		{`HSL::open -proto UDP -pool nosuch_pool`, `no such pool: nosuch_pool`},
		{`HSL::open -pool syslog_pool -timeout 3`, `bad option "-timeout"`},
		{`HSL::send notahandle text`, `invalid HSL handle`},
		{`HSL::open -publisher nosuch_pub`, `no such log publisher: nosuch_pub`},
		{`HSL::open -publisher remote_pub -pool syslog_pool`, `wrong # args`},
		{`HSL::open -pub`, `wrong # args`},
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
}

// TestHSLPublisherNeedsPublishers: an HSL that opens no publishers makes
// HSL::open -publisher a Tcl error, and the rule still compiles.
func TestHSLPublisherNeedsPublishers(t *testing.T) {
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED { HSL::open -publisher /Common/p }")
	if len(r.Unsupported()) != 0 {
		t.Fatalf("unsupported %+v: HSL::open -publisher is acted on", r.Unsupported())
	}
	p := NewProgram(&Env{HSL: poolOnlyHSL{}}, r)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "log publishers are not available") {
		t.Fatalf("err %v", err)
	}
}

// poolOnlyHSL opens pools only.
type poolOnlyHSL struct{}

func (poolOnlyHSL) Open(proto, pool string) (string, error)       { return "h", nil }
func (poolOnlyHSL) Send(handle string, data []byte) (bool, error) { return true, nil }

// TestHSLOpenChecks: a literal protocol is checked when the rule is
// saved, as BIG-IP checks it (in capitals); the pool name is not.
func TestHSLOpenChecks(t *testing.T) {
	if _, err := Compile("/Common/r", "when CLIENT_ACCEPTED {\n  set h [HSL::open -proto udp -pool p]\n}"); err == nil || !strings.Contains(err.Error(), `/Common/r:2:27: HSL::open: bad protocol "udp"`) {
		t.Errorf("lower-case protocol: %v", err)
	}
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED { set h [HSL::open -proto TCP -pool nosuch]; set r [HSL::send $h x] }")
	if len(r.Refs()) != 0 {
		t.Errorf("refs %+v: the pool is checked when the rule runs", r.Refs())
	}
	logs := &logSink{}
	p := NewProgram(publishedEnv(t, logs, &hslFake{}), mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED { log local0. [HSL::send [HSL::open -proto TCP -pool syslog_pool] x] }"))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil || len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], ": 1") {
		t.Errorf("HSL::send result: %v %q", err, logs.lines)
	}
}
