package shell

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// patience bounds waits so a bug fails instead of hanging; it is never
// a timing assertion.
const patience = 10 * time.Second

// serveFake serves a scripted backend on a real socket for the test.
func serveFake(t *testing.T, b *controltest.Backend) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		control.Serve(ctx, ln, b, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return path
}

func dialFake(t *testing.T, b *controltest.Backend) *control.Client {
	t.Helper()
	c, err := control.Dial(serveFake(t, b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestBatch(t *testing.T) {
	tests := []struct {
		name     string
		text     string // -c text
		script   string // else a script read as "s.tmsh"
		stdout   string
		stderr   string
		executed []string
		failed   bool
	}{
		{name: "one-shot keeps going after a failure", text: "echo a; fail 01020036:3: boom; echo b",
			stdout: "a\nb\n", stderr: "-c:1:9: 01020036:3: boom\n", executed: []string{"echo a", "fail 01020036:3: boom", "echo b"}, failed: true},
		{name: "one-shot quits", text: "echo a; quit; echo b",
			stdout: "a\n", executed: []string{"echo a", "quit"}},
		{name: "one-shot unfinished block goes to the daemon", text: "echo a; create ltm pool p {",
			stdout: "a\nran: create ltm pool p {\n", executed: []string{"echo a", "create ltm pool p {"}},
		{name: "script with comments, blocks and continuations",
			script:   "#TMSH-VERSION: 15.1.0\n# a rule\ncreate ltm rule r {\n  when HTTP_REQUEST {\n    # not a statement; { }\n    log local0. hi\n  }\n}\necho one \\\n  two\n\n",
			stdout:   "ran: create ltm rule r {\n  when HTTP_REQUEST {\n    # not a statement; { }\n    log local0. hi\n  }\n}\none \\\n  two\n",
			executed: []string{"create ltm rule r {\n  when HTTP_REQUEST {\n    # not a statement; { }\n    log local0. hi\n  }\n}", "echo one \\\n  two"}},
		{name: "script errors name file and line", script: "echo a\n\nfail boom\n}\necho b",
			stdout: "a\nb\n", stderr: "s.tmsh:3:1: boom\ns.tmsh:4:1: unexpected \"}\": no block is open here\n", executed: []string{"echo a", "fail boom", "echo b"}, failed: true},
		{name: "script stops at quit", script: "echo a\nquit\necho b\n",
			stdout: "a\n", executed: []string{"echo a", "quit"}},
		{name: "windows line ends", script: "echo a\r\necho b\r\n",
			stdout: "a\nb\n", executed: []string{"echo a", "echo b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &controltest.Backend{}
			var out, errb bytes.Buffer
			batch := &Batch{Session: dialFake(t, b), Stdout: &out, Stderr: &errb}
			if tt.script != "" {
				if err := batch.RunReader(context.Background(), strings.NewReader(tt.script), "s.tmsh"); err != nil {
					t.Fatal(err)
				}
			} else {
				batch.RunText(context.Background(), tt.text)
			}
			if out.String() != tt.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tt.stdout)
			}
			if errb.String() != tt.stderr {
				t.Errorf("stderr %q, want %q", errb.String(), tt.stderr)
			}
			if got := b.Executed(); strings.Join(got, "|") != strings.Join(tt.executed, "|") {
				t.Errorf("executed %q, want %q", got, tt.executed)
			}
			if batch.Failed() != tt.failed {
				t.Errorf("failed = %v, want %v", batch.Failed(), tt.failed)
			}
		})
	}
}

// A program feeding tmsh through a pipe sees each statement run as soon as
// it is complete, not when the pipe closes.
func TestBatchRunsPipedStatementsAsTheyArrive(t *testing.T) {
	b := &controltest.Backend{Started: make(chan string, 4)}
	c := dialFake(t, b)
	pr, pw := io.Pipe()
	var out bytes.Buffer
	batch := &Batch{Session: c, Stdout: &out, Stderr: io.Discard}
	done := make(chan struct{})
	go func() {
		defer close(done)
		batch.RunReader(context.Background(), pr, "")
	}()
	io.WriteString(pw, "echo first\ncreate ltm pool p {\n")
	select {
	case got := <-b.Started:
		if got != "echo first" {
			t.Fatalf("started %q", got)
		}
	case <-time.After(patience):
		t.Fatal("the first statement did not run before the pipe closed")
	}
	io.WriteString(pw, "}\n")
	if got := <-b.Started; got != "create ltm pool p {\n}" {
		t.Fatalf("started %q", got)
	}
	pw.Close()
	<-done
}

func TestBatchStopsWhenDaemonGoes(t *testing.T) {
	b := &controltest.Backend{}
	dir, _ := os.MkdirTemp("", "sh")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); control.Serve(ctx, ln, b, nil) }()
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	<-served
	var errb bytes.Buffer
	batch := &Batch{Session: c, Stdout: io.Discard, Stderr: &errb}
	batch.RunText(context.Background(), "echo a; echo b; echo c")
	if !batch.Failed() || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "connection to ltmd lost") {
		t.Fatalf("stderr %q", errb.String())
	}
}

func TestRunExitStatus(t *testing.T) {
	path := serveFake(t, &controltest.Backend{})
	script := filepath.Join(t.TempDir(), "s.tmsh")
	os.WriteFile(script, []byte("echo from file\nfail nope\n"), 0o600)
	tests := []struct {
		name   string
		opts   Options
		stdin  string
		status int
		stdout string
	}{
		{name: "command ok", opts: Options{Command: "echo hi"}, status: ExitOK, stdout: "hi\n"},
		{name: "command fails", opts: Options{Command: "fail x; echo after"}, status: ExitFailed, stdout: "after\n"},
		{name: "words as one command", opts: Options{Args: []string{"echo", "two words"}}, status: ExitOK, stdout: "\"two words\"\n"},
		{name: "file", opts: Options{File: script}, status: ExitFailed, stdout: "from file\n"},
		{name: "piped stdin", stdin: "echo piped\n", status: ExitOK, stdout: "piped\n"},
		{name: "stdin as -f -", opts: Options{File: "-"}, stdin: "echo dash\n", status: ExitOK, stdout: "dash\n"},
		{name: "missing file", opts: Options{File: script + ".none"}, status: ExitUsage},
		{name: "-c with -f", opts: Options{Command: "x", File: script}, status: ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			o := tt.opts
			o.Socket, o.StateDir = path, t.TempDir()
			o.Stdin, o.Stdout, o.Stderr = strings.NewReader(tt.stdin), &out, &errb
			if got := Run(o); got != tt.status {
				t.Fatalf("status %d, want %d (stderr %q)", got, tt.status, errb.String())
			}
			if out.String() != tt.stdout {
				t.Fatalf("stdout %q, want %q", out.String(), tt.stdout)
			}
		})
	}
}

func TestJoinArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"list", "ltm", "pool"}, "list ltm pool"},
		{[]string{"modify", "ltm", "pool", "p", "description", "two words"}, `modify ltm pool p description "two words"`},
		{[]string{"modify", "ltm", "pool", "p", "members", "add", "{ 1.1.1.1:80 }"}, "modify ltm pool p members add { 1.1.1.1:80 }"},
		{[]string{"x", `say "hi" there`}, `x "say \"hi\" there"`},
		{[]string{"x", ""}, `x ""`},
	}
	for _, tt := range tests {
		if got := joinArgs(tt.args); got != tt.want {
			t.Errorf("joinArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// load sys config merge from-terminal in a batch: in a script stream the
// rest of the script is the configuration (a pasted .scf file); with -c,
// standard input is.
func TestBatchLoadFromTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, text, script, stdin, stdout string
		executed                          []string
		failed                            bool
	}{
		{name: "script: the rest of the stream, in pieces read before and after",
			script:   "echo first\nload sys config merge from-terminal\nltm pool a { }\nltm pool b {\n    description \"x;y\"\n}\n",
			stdout:   "first\nloading (terminal):\nltm pool a { }\nltm pool b {\n    description \"x;y\"\n}\n",
			executed: []string{"echo first", "load sys config merge file "}},
		{name: "from-terminal with a file is refused, reading nothing",
			text: "load sys config merge from-terminal file x.conf; echo after", stdin: "ltm pool c { }\n",
			stdout: "after\n", executed: []string{"echo after"}, failed: true},
		{name: "-c: standard input, and the statements after it run",
			text: "load sys config merge from-terminal verify; echo after", stdin: "ltm pool c { }\n",
			stdout:   "loading (terminal):\nltm pool c { }\nafter\n",
			executed: []string{"load sys config merge verify file ", "echo after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &controltest.Backend{}
			var out, errb bytes.Buffer
			bt := &Batch{Session: b.NewSession("u"), Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(tc.stdin)}
			if tc.text != "" {
				bt.RunText(context.Background(), tc.text)
			} else if err := bt.RunReader(context.Background(), strings.NewReader(tc.script), "s.tmsh"); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.stdout || (errb.String() != "") != tc.failed || bt.Failed() != tc.failed {
				t.Fatalf("stdout\n%q\nwant\n%q\nstderr %q", out.String(), tc.stdout, errb.String())
			}
			ex := b.Executed()
			if len(ex) != len(tc.executed) {
				t.Fatalf("executed %q", ex)
			}
			for i := range ex {
				if !strings.HasPrefix(ex[i], tc.executed[i]) {
					t.Fatalf("executed %q, want %q", ex, tc.executed)
				}
			}
		})
	}
}
