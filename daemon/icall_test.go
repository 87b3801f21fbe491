package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCLIScript(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool sp1 members add { 127.168.1.1:80 }",
		"create ltm pool sp2",
		`create cli script addm {
proc script::init {} {
    set ::added 0
}
proc script::run {} {
    foreach p [tmsh::get_config ltm pool] {
        puts "pool [tmsh::get_name $p]"
    }
    set pool [lindex $tmsh::argv 1]
    set m [lindex $tmsh::argv 2]
    tmsh::modify ltm pool $pool members add \{ $m \}
    incr ::added
    puts "added $::added to $pool"
}
}`)
	out, errText := run(t, s, "run cli script addm sp2 127.168.1.2:80")
	if errText != "" {
		t.Fatal(errText)
	}
	if out != "pool sp1\npool sp2\nadded 1 to sp2\n" {
		t.Fatalf("output %q", out)
	}
	if out, _ := run(t, s, "list ltm pool sp2"); !strings.Contains(out, "127.168.1.2:http") {
		t.Fatalf("the member was not added: %s", out)
	}
	// The shell's rules hold: a member that is no address is refused, and
	// the error comes back with the script's line.
	_, errText = run(t, s, "run cli script addm sp2 nosuch:80")
	if !strings.Contains(errText, "script did not successfully complete") || !strings.Contains(errText, "line 11") {
		t.Fatalf("error %q", errText)
	}
	// A syntax error is refused at create, with its line and column.
	_, errText = run(t, s, "create cli script bad {\nproc script::run {} {\n    set x [foo\n}\n}")
	if !strings.Contains(errText, "01070151") || !strings.Contains(errText, "line 3") {
		t.Fatalf("a bad script: %q", errText)
	}
	if _, errText := run(t, s, "run cli script bad"); !strings.Contains(errText, "was not found") {
		t.Fatalf("the refused script exists: %q", errText)
	}
	// Listed and saved like other configuration, and read back.
	out, _ = run(t, s, "list cli script addm")
	if !strings.HasPrefix(out, "cli script addm {\nproc script::init {} {") {
		t.Fatalf("list: %q", out)
	}
	mustRun(t, s, "save sys config")
	conf, err := os.ReadFile(filepath.Join(e.StateDir(), "bigip.conf"))
	if err != nil || !strings.Contains(string(conf), "cli script /Common/addm {") {
		t.Fatalf("saved: %v\n%s", err, conf)
	}
	mustRun(t, s, "delete cli script addm", "load sys config")
	if out, _ := run(t, s, "run cli script addm sp1 127.168.1.3:80"); !strings.Contains(out, "added 1 to sp1") {
		t.Fatalf("after load: %q", out)
	}
}

func TestICallPeriodicHandler(t *testing.T) {
	t.Parallel()
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool ip1 members add { 127.168.2.1:80 }",
		`create sys icall script flip definition {
    set m [lindex [tmsh::get_field_value [lindex [tmsh::get_config ltm pool ip1] 0] members] 0]
    tmsh::modify ltm pool ip1 members modify \{ 127.168.2.1:80 \{ session user-disabled \} \}
    tmsh::log "flipped [tmsh::get_name $m]"
}`,
		"create sys icall handler periodic ph interval 1 script flip")
	eventually(t, 10*time.Second, "the periodic handler to disable the member", func() bool {
		out, _ := run(t, s, "list ltm pool ip1")
		return strings.Contains(out, "session user-disabled")
	})
	eventually(t, 10*time.Second, "the script's log line", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Contains(out, "flipped 127.168.2.1:http")
	})
	out, errText := run(t, s, "show sys icall handler periodic ph")
	if errText != "" || !strings.Contains(out, "Sys::iCall Handler: periodic ph") || !strings.Contains(out, "  Status       active\n") || strings.Contains(out, "Runs         0\n") {
		t.Fatalf("show: %q %s", out, errText)
	}
	if _, errText := run(t, s, "show sys icall handler periodic nosuch"); !strings.Contains(errText, "was not found") {
		t.Fatalf("show of no such handler: %q", errText)
	}
	// Deactivated, it stops: the member enabled again stays enabled.
	mustRun(t, s, "modify sys icall handler periodic ph status inactive",
		"modify ltm pool ip1 members modify { 127.168.2.1:80 { session user-enabled } }")
	time.Sleep(1500 * time.Millisecond)
	if out, _ := run(t, s, "list ltm pool ip1"); strings.Contains(out, "user-disabled") {
		t.Fatalf("an inactive handler ran: %s", out)
	}
	// A script that fails is logged, and the handler goes on; a run longer
	// than the interval is never overlapped by the next.
	mustRun(t, s, `create sys icall script fails definition {
    tmsh::log "start [clock clicks]"
    after 1200
    tmsh::log "end [clock clicks]"
    error "boom"
}`, "create sys icall handler periodic pf interval 1 script fails")
	var logText string
	eventually(t, 10*time.Second, "two failed runs logged", func() bool {
		logText, _ = run(t, s, "show sys log ltm")
		return strings.Count(logText, "generated this Tcl error: (script did not successfully complete: (boom)") >= 2
	})
	var seq []string
	for _, l := range strings.Split(logText, "\n") {
		switch {
		case strings.Contains(l, ": start "):
			seq = append(seq, "start")
		case strings.Contains(l, ": end "):
			seq = append(seq, "end")
		}
	}
	if len(seq) < 3 {
		t.Fatalf("the runs' log lines: %v", seq)
	}
	for i, w := range seq {
		if want := []string{"start", "end"}[i%2]; w != want {
			t.Fatalf("runs overlapped: %v", seq)
		}
	}
	// Deleting the handler stops it.
	mustRun(t, s, "delete sys icall handler periodic pf")
	if _, errText := run(t, s, "delete sys icall script fails"); errText != "" {
		t.Fatal(errText)
	}
}

func TestICallTriggeredHandler(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer func() { e.Close() }()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool tp1 members add { 127.168.3.1:80 127.168.3.2:80 }",
		`create sys icall script disable definition {
    set member $EVENT::context(member)
    tmsh::modify ltm pool $EVENT::context(pool) members modify \{ $member \{ session user-disabled \} \}
    tmsh::log "[EVENT::name] disabled $member"
}`,
		`create sys icall handler triggered th script disable subscriptions add { s1 { event-name MAINT filters add { pool { value tp* match-algorithm glob } } } }`)
	// An event no subscription takes runs nothing.
	mustRun(t, s, "generate sys icall event OTHER context { { name pool value tp1 } { name member value 127.168.3.1:80 } }",
		"generate sys icall event MAINT context { { name pool value xx } { name member value 127.168.3.1:80 } }",
		"generate sys icall event MAINT context { { name pool value tp1 } { name member value 127.168.3.2:80 } }")
	eventually(t, 10*time.Second, "the triggered handler to disable the member", func() bool {
		out, _ := run(t, s, "list ltm pool tp1")
		return strings.Contains(out, "session user-disabled")
	})
	eventually(t, 10*time.Second, "the log line", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Contains(out, "MAINT disabled 127.168.3.2:80")
	})
	out, _ := run(t, s, "list ltm pool tp1")
	if strings.Count(out, "user-disabled") != 1 {
		t.Fatalf("an event no subscription takes ran the script:\n%s", out)
	}
	// A handler needs a script that exists.
	if _, errText := run(t, s, "create sys icall handler triggered t2 script nosuch"); errText == "" {
		t.Fatal("a handler with no such script was accepted")
	}
	if _, errText := run(t, s, "generate sys icall event"); errText == "" {
		t.Fatal("an event without a name was accepted")
	}
	// After a restart the stored handler takes events again.
	mustRun(t, s, "modify ltm pool tp1 members modify { all { session user-enabled } }")
	e.Close()
	e = openTest(t, dir)
	s = e.NewSession("admin").(*Session)
	mustRun(t, s, "generate sys icall event MAINT context { { name pool value tp1 } { name member value 127.168.3.1:80 } }")
	eventually(t, 10*time.Second, "the handler to run after a restart", func() bool {
		out, _ := run(t, s, "list ltm pool tp1")
		return strings.Contains(out, "session user-disabled")
	})
}

func TestICallPerpetualHandler(t *testing.T) {
	t.Parallel()
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, `create sys icall script once definition { tmsh::log "perpetual ran [clock clicks]" }`,
		"create sys icall handler perpetual pp script once")
	// The script ends; the handler starts it again.
	eventually(t, 10*time.Second, "two runs", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Count(out, "perpetual ran") >= 2
	})
	mustRun(t, s, "delete sys icall handler perpetual pp")
}

// A script runs another with tmsh::run; the nesting is bounded.
func TestCLIScriptRunsScript(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, `create cli script inner { proc script::run {} { puts "inner [lrange $tmsh::argv 1 end]" } }`,
		`create cli script outer { proc script::run {} { puts outer; tmsh::run cli script inner a b } }`,
		`create cli script self { proc script::run {} { tmsh::run cli script self } }`)
	out, errText := run(t, s, "run cli script outer")
	if errText != "" || out != "outer\ninner a b\n" {
		t.Fatalf("output %q, error %q", out, errText)
	}
	if _, errText := run(t, s, "run cli script self"); !strings.Contains(errText, "scripts run 8 deep") {
		t.Fatalf("a script running itself: %q", errText)
	}
}

func TestScriptCompletion(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create cli script c1 { proc script::run {} { } }")
	for _, tc := range []struct{ line, want string }{
		{"run cli ", "script"},
		{"run cli script ", "c1"},
		{"create cli ", "script"},
		{"generate ", "sys"},
		{"generate sys icall ", "event"},
		{"generate sys icall event E ", "context"},
	} {
		got := s.Complete(tc.line)
		found := false
		for _, g := range got {
			found = found || g.Text == tc.want
		}
		if !found {
			t.Errorf("%q: %v, want %q among them", tc.line, got, tc.want)
		}
	}
}
