package rules

import "testing"

// TestCallReturnFromLoop: a proc reached with call returns the value of
// a return inside a loop or a command substitution, in its own rule and
// across rules, as Tcl does (library rules validate input this way).
func TestCallReturnFromLoop(t *testing.T) {
	lib := `proc octets {ip} {
  foreach o [split $ip .] {
    if {$o < 0 || $o > 255} { return bad }
  }
  return ok
}
proc first_big {l} {
  set i 0
  while {$i < [llength $l]} {
    if {[lindex $l $i] > 9} { return [lindex $l $i] }
    incr i
  }
  return none
}
proc early {} {
  for {set i 0} {$i < 5} {incr i} { set x [return at$i] }
  return late
}`
	cases := []struct{ call, want string }{
		{"call lib::octets 10.1.2.3", "ok"},
		{"call lib::octets 10.1.300.3", "bad"},
		{"call lib::octets abc", "bad"},
		{"call lib::first_big {1 5 12 30}", "12"},
		{"call lib::first_big {1 2}", "none"},
		{"call lib::early", "at0"},
	}
	for _, c := range cases {
		t.Run(c.call, func(t *testing.T) {
			logs := &logSink{}
			p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "lib", lib), mustCompile(t, "user", "when CLIENT_ACCEPTED { log local0. <["+c.call+"]> }"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			want := "local0.info Rule /Common/user <CLIENT_ACCEPTED>: <" + c.want + ">"
			if len(logs.lines) != 1 || logs.lines[0] != want {
				t.Errorf("logs %q, want %q", logs.lines, want)
			}
		})
	}
}
