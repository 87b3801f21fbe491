package rules

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustCompile(t testing.TB, name, body string) *Rule {
	t.Helper()
	r, err := Compile(name, body)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return r
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // substring of the error, with its position
	}{
		{"disabled", "when CLIENT_ACCEPTED {\n  set x 1\n  exec ls\n}", "/Common/disabled:3:3: command \"exec\" is disabled in iRules"},
		{"disabled nested", "when CLIENT_ACCEPTED {\n  if {1} {\n    file delete x\n  }\n}", ":3:5: command \"file\" is disabled"},
		{"vwait in switch", "when CLIENT_DATA {\n switch -glob [TCP::payload] {\n  a* { vwait x }\n }\n}", ":3:8: command \"vwait\" is disabled"},
		{"unknown", "when CLIENT_ACCEPTED { frobnicate }", ":1:24: unknown command \"frobnicate\""},
		{"unknown ns", "when CLIENT_ACCEPTED { TCP::frob }", "TCP commands available: TCP::abc, TCP::analytics, TCP::autowin, TCP::bandwidth"},
		{"unknown in proc", "proc p {} { nosuch }\nwhen CLIENT_ACCEPTED { call p }", ":1:13: unknown command \"nosuch\""},
		{"unknown in expr", "when CLIENT_ACCEPTED { if {[nosuch] > 1} { drop } }", ":1:29: unknown command \"nosuch\""},
		{"bad event", "when CLIENT_CONNECTED { drop }", ":1:6: unknown event \"CLIENT_CONNECTED\""},
		{"bad priority", "when CLIENT_ACCEPTED priority 2000 { drop }", ":1:31: bad priority \"2000\""},
		{"top level junk", "set x 1", ":1:1: unexpected \"set\" at the top level"},
		{"missing brace", "when CLIENT_ACCEPTED {\n  drop\n", ":1:22: missing close-brace"},
		{"bad expr", "when CLIENT_ACCEPTED {\n  if {[TCP::local_port] >>> 1} { drop }\n}", ":2:"},
		{"body not braced", "when CLIENT_ACCEPTED $x", "substituted word"},
		{"namespace", "when RULE_INIT { namespace eval x {} }", "command \"namespace\" is disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.name, c.body)
			if err == nil {
				t.Fatalf("compiled; want error containing %q", c.want)
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *CompileError", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	body := `
# comments at the top level are fine
priority 100
when RULE_INIT { set static::debug 0 }
when CLIENT_ACCEPTED timing on priority 10 { TCP::collect }
proc helper {a {b 2}} { return [expr {$a + $b}] }
when HTTP_REQUEST { log local0. "http later" }
`
	r := mustCompile(t, "/Part/ok", body)
	if r.Name != "/Part/ok" {
		t.Errorf("name %q", r.Name)
	}
	hs := r.Handlers()
	if len(hs) != 3 || hs[1].Priority != 10 || hs[0].Priority != 100 || hs[2].Event != HTTPRequest {
		t.Errorf("handlers %+v", hs)
	}
	if !r.Handles(ClientAccepted) || r.Handles(ServerData) {
		t.Errorf("Handles wrong")
	}
}

func TestRefs(t *testing.T) {
	r := mustCompile(t, "refs", "when CLIENT_ACCEPTED {\n  if {1} { pool p1 } else { snatpool sp1 }\n  pool $x\n}")
	got := r.Refs()
	if len(got) != 2 || got[0] != (Ref{Kind: "pool", Name: "p1", Line: 2, Col: 17}) || got[1].Name != "sp1" {
		t.Errorf("refs %+v", got)
	}
}

// run compiles rules into a program, runs events on one session and returns
// the connection's record and the log.
func run(t *testing.T, env *Env, bodies []string, events ...Event) (*fakeConn, *logSink, error) {
	t.Helper()
	logs := &logSink{}
	if env == nil {
		env = &Env{}
	}
	env.Log = logs.log
	var rs []*Rule
	for i, b := range bodies {
		rs = append(rs, mustCompile(t, "r"+string(rune('0'+i)), b))
	}
	p := NewProgram(env, rs...)
	if err := p.Init(); err != nil {
		t.Fatalf("init: %v", err)
	}
	c := newFakeConn()
	s := p.NewConnState(c)
	defer s.Release()
	for _, ev := range events {
		if err := s.Run(ev); err != nil {
			return c, logs, err
		}
	}
	return c, logs, nil
}

func TestEvents(t *testing.T) {
	mblb := `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { TCP::release; TCP::notify request; TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::release; TCP::notify response; TCP::collect }`
	portRoute := `when CLIENT_ACCEPTED {
  if { [TCP::local_port] >= 10000 && [TCP::local_port] < 10500 } {
    pool WSH_1_pool
  } elseif { [TCP::local_port] >= 10500 && [TCP::local_port] < 11000 } {
    pool WSH_2_pool
  } else {
    drop
  }
}`
	cases := []struct {
		name   string
		bodies []string
		events []Event
		want   string
	}{
		{"mblb", []string{mblb}, []Event{ClientAccepted, ClientData, ServerConnected, ServerData},
			"collect clientside 0 0; release clientside -1; notify clientside 0; collect clientside 0 0; collect serverside 0 0; release serverside -1; notify serverside 1; collect serverside 0 0"},
		{"port routing", []string{portRoute}, []Event{ClientAccepted}, "pool WSH_1_pool"},
		{"priority across rules", []string{
			"when CLIENT_ACCEPTED { pool a }",
			"when CLIENT_ACCEPTED priority 100 { pool b }",
			"when CLIENT_ACCEPTED { pool c }"}, []Event{ClientAccepted}, "pool b; pool a; pool c"},
		{"rule priority", []string{"priority 900\nwhen CLIENT_ACCEPTED { pool a }", "when CLIENT_ACCEPTED { pool b }"}, []Event{ClientAccepted}, "pool b; pool a"},
		{"return ends one handler", []string{"when CLIENT_ACCEPTED { pool a; return; pool x }", "when CLIENT_ACCEPTED { pool b }"}, []Event{ClientAccepted}, "pool a; pool b"},
		{"event disable", []string{"when CLIENT_DATA { pool a; event disable }", "when CLIENT_DATA { pool b }"}, []Event{ClientData, ClientData}, "pool a; pool b; pool b"},
		{"event disable all", []string{"when CLIENT_ACCEPTED { event disable all }\nwhen CLIENT_DATA { pool a }"}, []Event{ClientAccepted, ClientData}, ""},
		{"event other", []string{"when CLIENT_ACCEPTED { event CLIENT_DATA disable }\nwhen CLIENT_DATA { pool a }\nwhen SERVER_DATA { event CLIENT_DATA enable }"}, []Event{ClientAccepted, ClientData, ServerData, ClientData}, "pool a"},
		{"vars persist across events", []string{"when CLIENT_ACCEPTED { set p from_accept }\nwhen CLIENT_DATA { pool $p }"}, []Event{ClientAccepted, ClientData}, "pool from_accept"},
		{"vars shared across rules", []string{"when CLIENT_ACCEPTED { set p shared }", "when CLIENT_ACCEPTED { pool $p }"}, []Event{ClientAccepted}, "pool shared"},
		{"statics", []string{"when RULE_INIT { set static::target p9 }\nwhen CLIENT_ACCEPTED { pool $static::target }"}, []Event{ClientAccepted}, "pool p9"},
		{"static arrays", []string{"when RULE_INIT { array set static::by { a p1 b p2 }; set static::by(c) p3 }\nwhen CLIENT_ACCEPTED { set k b; pool $static::by($k); pool $static::by(c); if {![info exists static::by(z)]} { pool [set static::by(a)] } }"}, []Event{ClientAccepted}, "pool p2; pool p3; pool p1"},
		{"responder without pool", []string{"when CLIENT_ACCEPTED { TCP::respond \"hello\\r\\n\"; TCP::close }"}, []Event{ClientAccepted}, `respond clientside "hello\r\n"; close clientside`},
		{"decisions", []string{`when CLIENT_ACCEPTED { pool test_pool member 127.0.0.34 9001; node 127.0.0.5:80; snat automap; snat none; snat 127.0.0.77; snatpool sp member 127.0.0.8; reject; discard; drop; forward }`}, []Event{ClientAccepted},
			"member test_pool 127.0.0.34:9001; node 127.0.0.5:80; snat automap; snat none; snat 127.0.0.77:0; snatpool sp 127.0.0.8:0; reject; discard; drop; forward"},
		{"LB commands", []string{`when LB_FAILED { LB::reselect pool other member 127.0.0.35:80; LB::mode round-robin; LB::detach }`}, []Event{LBFailed},
			"LB::reselect other 127.0.0.35:80; LB::mode round-robin; LB::detach"},
		{"LB select eval", []string{`when CLIENT_ACCEPTED { eval [LB::select] }`}, []Event{ClientAccepted}, "member test_pool 127.0.0.34:9001"},
		{"clientside in server event", []string{`when SERVER_CONNECTED { clientside { TCP::collect 4 } }`}, []Event{ServerConnected}, "collect clientside 4 0"},
		{"call proc", []string{"proc pick {port} { if {$port < 10500} { return p1 } ; return p2 }\nwhen CLIENT_ACCEPTED { pool [call pick [TCP::local_port]] }"}, []Event{ClientAccepted}, "pool p1"},
		{"call proc other rule", []string{"proc pick {} { return px }", "when CLIENT_ACCEPTED { pool [call r0::pick] }"}, []Event{ClientAccepted}, "pool px"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, logs, err := run(t, nil, c.bodies, c.events...)
			if err != nil {
				t.Fatalf("run: %v (log %v)", err, logs.lines)
			}
			if got := conn.String(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestCommandsResults(t *testing.T) {
	dgs := map[string]*DataGroup{}
	hosts, err := NewDataGroup("/Common/hosts", DGString, []Record{{Key: "www.example.com", Value: "web_pool"}, {Key: "api.", Value: "api_pool"}, {Key: ".org", Value: "org_pool"}})
	if err != nil {
		t.Fatal(err)
	}
	nets, err := NewDataGroup("/Common/nets", DGAddress, []Record{{Key: "10.0.0.0/8", Value: "ten"}, {Key: "127.0.0.0/255.0.0.0", Value: "loop"}})
	if err != nil {
		t.Fatal(err)
	}
	dgs["hosts"], dgs["nets"] = hosts, nets
	find := func(name string) (*DataGroup, bool) {
		dg, ok := dgs[strings.TrimPrefix(name, "/Common/")]
		return dg, ok
	}
	cases := []struct{ expr, want string }{
		{"TCP::local_port", "10100"},
		{"TCP::remote_port", "40001"},
		{"TCP::client_port", "40001"},
		{"TCP::server_port", "9000"},
		{"IP::client_addr", "127.0.0.9"},
		{"IP::local_addr", "127.0.0.43"},
		{"IP::remote_addr", "127.0.0.9"},
		{"IP::server_addr", "127.0.0.34"},
		{"IP::protocol", "6"},
		{"IP::version", "4"},
		{"IP::addr [IP::client_addr] equals 127.0.0.0/8", "1"},
		{"IP::addr 10.1.2.3/24 equals 10.1.2.200", "1"},
		{"IP::addr 10.1.2.3 equals 10.1.3.3/255.255.255.0", "0"},
		{"IP::addr 10.1.2.3 mask 255.255.0.0", "10.1.0.0"},
		{"IP::addr ::1 equals ::1", "1"},
		{"LB::server", "test_pool 127.0.0.34 9000"},
		{"LB::server port", "9000"},
		{"LB::status pool test_pool member 127.0.0.34 9001", "down"},
		{"active_members test_pool", "2"},
		{"LB::queue on", "1"},
		{"LB::queue on other", "0"},
		{"LB::queue limit depth", "5"},
		{"LB::queue limit time test_pool", "300"},
		{"LB::queue depth", "2"},
		{"LB::queue depth one test_pool", "2"},
		{"LB::queue depth all other", "0"},
		{"active_members -list test_pool", "{127.0.0.34 9000} {127.0.0.34 9001}"},
		{"class match www.example.com equals hosts", "1"},
		{"class match -value www.example.com equals hosts", "web_pool"},
		{"class match -name api.example.com starts_with hosts", "api."},
		{"class match -value foo.org ends_with /Common/hosts", "org_pool"},
		{"class match -index nothing equals hosts", "-1"},
		{"class match -element www.example.com equals hosts", "www.example.com web_pool"},
		{"class lookup www.example.com hosts", "web_pool"},
		{"class lookup nope hosts", ""},
		{"class search -all -name hosts contains o", ".org www.example.com"},
		{"class match -value [IP::client_addr] equals nets", "loop"},
		{"class match 192.168.1.1 equals nets", "0"},
		{"class size hosts", "3"},
		{"class exists hosts", "1"},
		{"class exists nope", "0"},
		{"class names hosts *.*", ".org api. www.example.com"},
		{"class type nets", "ip"},
		{"matchclass www.example.com equals hosts", "3"},
		{"matchclass foo.org ends_with ::hosts", "1"},
		{"matchclass hosts contains o", "1"},
		{"matchclass nothing equals hosts", "0"},
		{"matchclass [IP::client_addr] equals nets", "2"},
		{"getfield a:b:c : 2", "b"},
		{"getfield a::b::c :: 3", "c"},
		{"getfield a:b 0 5", ""},
		{"findstr {Cookie: a=1; JSESSIONID=abc123; x=y} JSESSIONID 11 {;}", "abc123"},
		{"findstr abcdef cd", "cdef"},
		{"findstr abcdef cd 1 2", "de"},
		{"substr abcdefgh 2 3", "cde"},
		{"substr abcdefgh 2 fg", "cde"},
		{"substr abc 5", ""},
		{"string length [TCP::payload]", "9"},
		{"TCP::payload length", "9"},
		{"TCP::payload 3", "\x00\x05h"},
		{"binary scan [TCP::payload] Sa* len body; list $len $body", "5 hello\x00\x01"},
		{"TCP::payload replace 0 2 XY; TCP::payload", "XYhello\x00\x01"},
		{"event name", "CLIENT_DATA"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			body := "when CLIENT_DATA { set ::out [" + c.expr + "] }"
			r := mustCompile(t, "cmds", body)
			logs := &logSink{}
			p := NewProgram(&Env{Log: logs.log, DataGroup: find}, r)
			conn := newFakeConn()
			conn.payload[ClientSide] = []byte("\x00\x05hello\x00\x01")
			s := p.NewConnState(conn)
			defer s.Release()
			if err := s.Run(ClientData); err != nil {
				t.Fatalf("%v", err)
			}
			if got, _ := s.Var("out"); got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
		})
	}
}

func TestRuntimeErrorResetsOneConnection(t *testing.T) {
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED {\n  pool a\n  set y $nosuch\n  pool never\n}\nwhen CLIENT_DATA { pool later }")
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, r)
	c1 := newFakeConn()
	s1 := p.NewConnState(c1)
	err := s1.Run(ClientAccepted)
	var re *RuntimeError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RuntimeError", err)
	}
	wantLine := `TCL error: /Common/r <CLIENT_ACCEPTED> - can't read "nosuch": no such variable`
	if !strings.HasPrefix(re.Line, wantLine) || re.Where != "/Common/r:3:3" {
		t.Errorf("line %q where %q", re.Line, re.Where)
	}
	if len(logs.lines) != 1 || !strings.HasPrefix(logs.lines[0], "local0.err "+wantLine) {
		t.Errorf("log %q", logs.lines)
	}
	if c1.String() != "pool a" {
		t.Errorf("calls %q", c1)
	}
	s1.Release()
	nextConnectionUnaffected(t, p)
}

// nextConnectionUnaffected checks that a program whose rule failed on one
// connection runs CLIENT_DATA ("pool later") on the next one as usual.
func nextConnectionUnaffected(t *testing.T, p *Program) {
	t.Helper()
	c := newFakeConn()
	s := p.NewConnState(c)
	defer s.Release()
	if err := s.Run(ClientData); err != nil || c.String() != "pool later" {
		t.Errorf("second connection: %v %q", err, c)
	}
}

// TestPanicResetsOneConnection: a panic below a command (here in the
// connection's own code) is a runtime error of that connection, logged
// with its stack; the program serves the next connection.
func TestPanicResetsOneConnection(t *testing.T) {
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED {\n  pool a\n  pool crash\n}\nwhen CLIENT_DATA { pool later }")
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, r)
	c1 := newFakeConn()
	c1.panicPool = "crash"
	s1 := p.NewConnState(c1)
	err := s1.Run(ClientAccepted)
	var re *RuntimeError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Line, "TCL error: /Common/r <CLIENT_ACCEPTED> - internal error: fake dataplane bug in crash") {
		t.Fatalf("got %v, want a *RuntimeError for the panic", err)
	}
	if len(logs.lines) != 2 || !strings.HasPrefix(logs.lines[1], "local0.err TCL internal error: /Common/r <CLIENT_ACCEPTED> - goroutine ") ||
		!strings.Contains(logs.lines[1], "(*fakeConn).Decide") {
		t.Errorf("log %q", logs.lines)
	}
	s1.Release()
	nextConnectionUnaffected(t, p)
}

func TestDecideErrorIsTclError(t *testing.T) {
	r := mustCompile(t, "r", "when CLIENT_ACCEPTED { if {[catch {pool missing} m]} { pool fallback } }")
	p := NewProgram(nil, r)
	c := newFakeConn()
	c.failPool = "missing"
	s := p.NewConnState(c)
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil || c.String() != "pool fallback" {
		t.Errorf("%v %q", err, c)
	}
}

func TestBudget(t *testing.T) {
	cases := []struct{ name, body string }{
		{"while true", "when CLIENT_ACCEPTED { while {1} {} }"},
		{"for ever", "when CLIENT_ACCEPTED { for {} {1} {} {} }"},
		{"catch cannot swallow", "when CLIENT_ACCEPTED { catch { while 1 { set x 1 } } }"},
		{"recursion", "proc f {} { call f }\nwhen CLIENT_ACCEPTED { call f }"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "loop", c.body)
			logs := &logSink{}
			p := NewProgram(&Env{Log: logs.log, Steps: 10_000, Timeout: 5 * time.Second}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			err := s.Run(ClientAccepted)
			var re *RuntimeError
			if !errors.As(err, &re) || re.Event != ClientAccepted {
				t.Fatalf("got %v, want a runtime error", err)
			}
			if len(logs.lines) != 1 || !strings.Contains(logs.lines[0], "TCL error: /Common/loop <CLIENT_ACCEPTED> - ") {
				t.Errorf("log %q", logs.lines)
			}
		})
	}
}

func TestLog(t *testing.T) {
	_, logs, err := run(t, nil, []string{`when CLIENT_ACCEPTED { log local0. "client [IP::client_addr]"; log local1.warning x; log -noname local0.info y; log plain }`}, ClientAccepted)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"local0.info Rule /Common/r0 <CLIENT_ACCEPTED>: client 127.0.0.9",
		"local1.warning Rule /Common/r0 <CLIENT_ACCEPTED>: x",
		"local0.info y",
		"local0.info Rule /Common/r0 <CLIENT_ACCEPTED>: plain",
	}
	if strings.Join(logs.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(logs.lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestSessionReuseForgetsVariables(t *testing.T) {
	r := mustCompile(t, "r", "when CLIENT_ACCEPTED { if {[info exists seen]} { pool again } else { pool first }; set seen 1 }")
	p := NewProgram(nil, r)
	for i := 0; i < 3; i++ {
		c := newFakeConn()
		s := p.NewConnState(c)
		if err := s.Run(ClientAccepted); err != nil || c.String() != "pool first" {
			t.Fatalf("round %d: %v %q", i, err, c)
		}
		s.Release()
	}
}

func TestRuleInitHasNoConnection(t *testing.T) {
	r := mustCompile(t, "r", "when RULE_INIT { pool x }")
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, r)
	if err := p.Init(); err == nil || !strings.Contains(err.Error(), "not valid in this context") {
		t.Errorf("got %v", err)
	}
}

func TestTable(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tbl := NewTable()
	tbl.Now = func() time.Time { return now }
	r := mustCompile(t, "t", "when CLIENT_ACCEPTED { set ::out [eval $::cmd] }")
	p := NewProgram(&Env{Table: tbl}, r)
	steps := []struct {
		cmd, want string
		advance   time.Duration
	}{
		{"table set k v 10", "v", 0},
		{"table lookup k", "v", 0},
		{"table add k other", "v", 0},
		{"table replace nope x", "", 0},
		{"table lookup nope", "", 0},
		{"table incr n", "1", 0},
		{"table incr n 5", "6", 0},
		{"table append s ab", "ab", 0},
		{"table set -subtable users alice 1 indefinite", "1", 0},
		{"table set -subtable users bob 2", "2", 0},
		{"table keys -subtable users", "alice bob", 0},
		{"table keys -subtable users -count", "2", 0},
		{"table timeout k", "10", 0},
		{"table timeout -remaining k", "7", 3 * time.Second},
		{"table lookup -notouch k", "v", 6 * time.Second},
		{"table lookup k", "", 2 * time.Second},
		{"table lifetime -subtable users alice", "indefinite", 0},
		{"table delete -subtable users bob", "", 0},
		{"table keys -subtable users", "alice", 0},
		{"table delete -subtable users -all", "", 0},
		{"table keys -subtable users -count", "0", 200 * time.Second},
		{"table lookup n", "", 0},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		s := p.NewConnState(newFakeConn())
		s.in.SetVar("::cmd", tclStr(st.cmd))
		if err := s.Run(ClientAccepted); err != nil {
			t.Fatalf("%s: %v", st.cmd, err)
		}
		if got, _ := s.Var("out"); got != st.want {
			t.Errorf("%s: got %q want %q", st.cmd, got, st.want)
		}
		s.Release()
	}
}
