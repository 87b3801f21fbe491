package tmshscript

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeShell answers list and show with fixed text and records the other
// commands, as the daemon's session would run them.
type fakeShell struct {
	ran    []string
	folder string
}

const poolText = `ltm pool p1 {
    members {
        127.168.0.1:http {
            address 127.168.0.1
        }
        127.168.0.2:http {
            address 127.168.0.2
            session user-disabled
        }
    }
    monitor tcp
}
ltm pool p2 {
    description "two words"
}
`

const statusText = `ltm pool p1 {
    active-member-cnt 2
    status.availability-state available
}
`

func (f *fakeShell) Exec(_ context.Context, line string, w io.Writer) error {
	f.ran = append(f.ran, line)
	switch {
	case line == "list ltm pool":
		io.WriteString(w, poolText)
	case strings.HasPrefix(line, "show ltm pool p1 field-fmt"):
		io.WriteString(w, statusText)
	case strings.HasPrefix(line, "cd "):
		f.folder = strings.TrimPrefix(line, "cd ")
	case strings.HasPrefix(line, "delete ltm pool nosuch"):
		return errors.New("01020036:3: The requested Pool (/Common/nosuch) was not found.")
	case strings.HasPrefix(line, "create ltm pool warn"):
		io.WriteString(w, "warning: kept\n")
	}
	return nil
}

func (f *fakeShell) Folder() string {
	if f.folder == "" {
		return "/Common"
	}
	return f.folder
}

func TestTmshCommands(t *testing.T) {
	tests := []struct {
		name string
		body string // script::run's body
		args []string
		out  string   // puts output
		ran  []string // shell commands run
		err  string   // error substring
		logs string
	}{
		{name: "argv", body: `puts "$tmsh::argc [lrange $tmsh::argv 1 end]"`, args: []string{"a", "b"}, out: "3 a b\n"},
		{name: "create joins words", body: `tmsh::create ltm pool px members add \{ 127.168.0.9:80 \}`, ran: []string{"create ltm pool px members add { 127.168.0.9:80 }"}},
		{name: "modify one word", body: `tmsh::modify "ltm pool p1 members modify { 127.168.0.1:80 { session user-disabled } }"`, ran: []string{"ltm pool p1 members modify { 127.168.0.1:80 { session user-disabled } }"}},
		{name: "delete error is a Tcl error", body: `tmsh::delete ltm pool nosuch`, err: "01020036:3: The requested Pool (/Common/nosuch) was not found."},
		{name: "catch the error", body: `if {[catch {tmsh::delete ltm pool nosuch} e]} { puts "caught: $e" }`, out: "caught: 01020036:3: The requested Pool (/Common/nosuch) was not found.\n"},
		{name: "warnings reach the output", body: `tmsh::create ltm pool warn`, out: "warning: kept\n"},
		{name: "get_config names", body: `foreach p [tmsh::get_config ltm pool] { puts [tmsh::get_name $p] }`, out: "p1\np2\n"},
		{name: "get_type", body: `puts [tmsh::get_type [lindex [tmsh::get_config ltm pool] 0]]`, out: "ltm pool\n"},
		{name: "get_field_value word", body: `puts [tmsh::get_field_value [lindex [tmsh::get_config ltm pool] 0] monitor]`, out: "tcp\n"},
		{name: "get_field_value quoted", body: `puts [tmsh::get_field_value [lindex [tmsh::get_config ltm pool] 1] description]`, out: "two words\n"},
		{name: "get_field_value nested items", body: `foreach m [tmsh::get_field_value [lindex [tmsh::get_config ltm pool] 0] members] { puts "[tmsh::get_name $m] [tmsh::get_field_value $m address]" }`, out: "127.168.0.1:http 127.168.0.1\n127.168.0.2:http 127.168.0.2\n"},
		{name: "get_field_value missing", body: `tmsh::get_field_value [lindex [tmsh::get_config ltm pool] 0] nosuch`, err: "field not found: nosuch"},
		{name: "get_field_names", body: `set p [lindex [tmsh::get_config ltm pool] 0]; puts [tmsh::get_field_names value $p]; puts [tmsh::get_field_names nested $p]`, out: "monitor\nmembers\n"},
		{name: "get_status", body: `puts [tmsh::get_field_value [lindex [tmsh::get_status ltm pool p1] 0] active-member-cnt]`, out: "2\n", ran: []string{"show ltm pool p1 field-fmt"}},
		{name: "list returns the text", body: `puts -nonewline [tmsh::list ltm pool]`, out: poolText},
		{name: "cd and pwd", body: `tmsh::cd /Part1; puts [tmsh::pwd]`, out: "/Part1\n"},
		{name: "transaction", body: `tmsh::begin_transaction; tmsh::create ltm pool a; tmsh::commit_transaction`, ran: []string{"create cli transaction", "create ltm pool a", "submit cli transaction"}},
		{name: "display", body: `tmsh::display "hello"`, out: "hello\n"},
		{name: "log", body: `tmsh::log "one"; tmsh::log warning "two"`, logs: "info:one|warning:two|"},
		{name: "unsupported is an error", body: `tmsh::stateless enabled`, err: "tmsh::stateless is not supported by openltm yet"},
		{name: "no file access", body: `open /etc/passwd`, err: `invalid command name "open"`},
		{name: "no exec", body: `exec ls`, err: `invalid command name "exec"`},
		{name: "error has its line", body: "set x 1\n  error boom", err: "line 3 column 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("/Common/t", "proc script::run {} {\n"+tc.body+"\n}\n", CLI)
			if err != nil {
				t.Fatal(err)
			}
			sh := &fakeShell{}
			var out strings.Builder
			var logs strings.Builder
			err = s.Run(context.Background(), Env{Shell: sh, Out: &out, Timeout: 5 * time.Second,
				Log: func(sev, msg string) { logs.WriteString(sev + ":" + msg + "|") }}, tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.out {
				t.Errorf("output %q, want %q", out.String(), tc.out)
			}
			if logs.String() != tc.logs {
				t.Errorf("logs %q, want %q", logs.String(), tc.logs)
			}
			for _, want := range tc.ran {
				found := false
				for _, r := range sh.ran {
					found = found || strings.HasSuffix(r, want)
				}
				if !found {
					t.Errorf("ran %q, want %q among them", sh.ran, want)
				}
			}
		})
	}
}

func TestInitBeforeRun(t *testing.T) {
	s, err := Compile("/Common/t", "proc script::init {} { set ::order init }\nproc script::run {} { puts \"$::order run\" }\n", CLI)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}, Out: &out}, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "init run\n" {
		t.Fatalf("output %q", out.String())
	}
	s, _ = Compile("/Common/t", "proc other {} {}\n", CLI)
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}}, nil); err == nil || !strings.Contains(err.Error(), "no script::run") {
		t.Fatalf("a script without script::run: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		body      string
		line, col int
	}{
		{"proc script::run {} {\n  set x [foo\n}\n", 2, 9},
		{"proc script::run {} {\n  puts \"a\n}\n", 2, 8},
		{"proc script::run {} {\n", 1, 21},
	}
	for _, tc := range tests {
		_, err := Compile("/Common/bad", tc.body, CLI)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: error %v, want a SyntaxError", tc.body, err)
		}
		if se.Line != tc.line || se.Col != tc.col {
			t.Errorf("%q: at %d:%d (%v), want %d:%d", tc.body, se.Line, se.Col, se, tc.line, tc.col)
		}
	}
}

func TestICallEvent(t *testing.T) {
	s, err := Compile("/Common/ic", "puts \"[EVENT::name] $EVENT::context(protocol) [EVENT::context port] [EVENT::handler]\"\nproc f {} { return $EVENT::context(port) }\nputs [f]\n", ICall)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	ev := &Event{Name: "tutorial", Context: [][2]string{{"protocol", "http"}, {"port", "80"}}}
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}, Out: &out, Event: ev, Handler: "/Common/h"}, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "tutorial http 80 /Common/h\n80\n" {
		t.Fatalf("output %q", out.String())
	}
}

func TestTimeoutStopsARun(t *testing.T) {
	s, err := Compile("/Common/loop", "while 1 { incr i }\n", ICall)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), Env{Shell: &fakeShell{}, Timeout: 50 * time.Millisecond}, nil)
	if err == nil {
		t.Fatal("a script looping for ever was not stopped")
	}
}

func TestAfterStopsWithTheRun(t *testing.T) {
	s, err := Compile("/Common/sleep", "after 10000\nputs woke\n", ICall)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var out strings.Builder
	err = s.Run(ctx, Env{Shell: &fakeShell{}, Out: &out}, nil)
	if err == nil || !strings.Contains(err.Error(), "script stopped") || out.Len() > 0 {
		t.Fatalf("a cancelled sleep: %v, output %q", err, out.String())
	}
	s, _ = Compile("/Common/sleep", "after 1 {puts woke}\n", ICall)
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}, Out: &out}, nil); err != nil || out.String() != "woke\n" {
		t.Fatalf("after with a script: %v, output %q", err, out.String())
	}
}

// BIG-IP saves a cli script's description and signing status inside its
// body, after the procedures: they are not run.
func TestCLIMetadataLines(t *testing.T) {
	body := "proc script::run {} {\n    puts ran\n}\n    description \"two words\"\n    total-signing-status not-all-signed\n"
	s, err := Compile("/Common/m", body, CLI)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != body {
		t.Fatalf("the body was changed: %q", s.Source)
	}
	var out strings.Builder
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}, Out: &out}, nil); err != nil || out.String() != "ran\n" {
		t.Fatalf("run: %v, output %q", err, out.String())
	}
	// In an iCall script they are commands like any other.
	s, _ = Compile("/Common/m", "description x\n", ICall)
	if err := s.Run(context.Background(), Env{Shell: &fakeShell{}}, nil); err == nil {
		t.Fatal("description ran as a command in an iCall script")
	}
}

// EVENT:: with a handler's arguments and with EVENT::get_next: what each
// command answers, run by run.
func TestEventArgsAndGetNext(t *testing.T) {
	evs := []*Event{
		{Name: "A", Context: [][2]string{{"k", "1"}, {"site", "ev"}}},
		{Name: "B", Context: [][2]string{{"k", "2"}}},
	}
	args := [][2]string{{"site", "arg"}, {"pool", "p1"}}
	for _, tc := range []struct {
		name  string
		body  string
		event *Event
		args  [][2]string
		next  bool
		out   string
		err   string
	}{
		{name: "arguments alone", body: `puts "$EVENT::context(pool) [EVENT::context site] [EVENT::context]"`, args: args, out: "p1 arg site arg pool p1\n"},
		{name: "no event, no arguments", body: `EVENT::context`, err: "not run for an event and its handler has no arguments"},
		{name: "an event's pair wins", body: `puts "[EVENT::context site] [EVENT::context pool] [llength [EVENT::context]]"`, event: evs[0], args: args, out: "ev p1 6\n"},
		{name: "no name without an event", body: `EVENT::name`, args: args, err: "not run for an event"},
		{name: "get_next in turn", body: `
proc take {} { EVENT::get_next; return "[EVENT::name]:$EVENT::context(k):[EVENT::context pool]" }
puts [take]
puts [take]
puts [info exists EVENT::context(site)]`, args: args, next: true, out: "A:1:p1\nB:2:p1\n1\n"},
		{name: "the earlier event's pairs go", body: `
EVENT::get_next
EVENT::get_next
puts [array names EVENT::context]`, next: true, out: "k\n"},
		{name: "get_next ends with the handler", body: `EVENT::get_next; EVENT::get_next; EVENT::get_next`, next: true, err: "EVENT::get_next: stopped"},
		{name: "get_next outside a perpetual handler", body: `EVENT::get_next`, event: evs[0], err: "only the script of a perpetual handler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("/Common/s", tc.body, ICall)
			if err != nil {
				t.Fatal(err)
			}
			env := Env{Shell: &fakeShell{}, Event: tc.event, Args: tc.args}
			var out bytes.Buffer
			env.Out = &out
			if tc.next {
				queue := append([]*Event(nil), evs...)
				env.Next = func(ctx context.Context) (*Event, error) {
					if len(queue) == 0 {
						return nil, errors.New("stopped")
					}
					ev := queue[0]
					queue = queue[1:]
					return ev, nil
				}
			}
			err = s.Run(context.Background(), env, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || out.String() != tc.out {
				t.Fatalf("output %q, error %v; want %q", out.String(), err, tc.out)
			}
		})
	}
}
