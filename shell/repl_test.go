package shell

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
	"golang.org/x/term"
)

// scripted is a LineReader that answers from a list and records the
// prompts it was shown.
type scripted struct {
	lines   []Line
	prompts []string
	// after, when set, runs once the line at that index was handed over.
	after map[int]func()
	n     int
}

func (s *scripted) ReadLine(ctx context.Context, p LinePrompt) (Line, error) {
	s.prompts = append(s.prompts, p.Text)
	if f := s.after[s.n-1]; f != nil {
		f()
		delete(s.after, s.n-1)
	}
	if s.n >= len(s.lines) {
		return Line{}, io.EOF
	}
	l := s.lines[s.n]
	s.n++
	return l, nil
}

func TestREPL(t *testing.T) {
	sugg := []control.Suggestion{
		{Text: "monitor", Description: "LTM monitor templates", Group: "Modules"},
		{Text: "pool", Description: "Load balancing pool configuration", Group: "Components"},
		{Text: "policy", Description: "Policy configuration", Group: "Components"},
	}
	top := "u@(fake)(cfg-sync Standalone)(Active)(/Common)(tmos)# "
	ltm := "u@(fake)(cfg-sync Standalone)(Active)(/Common)(tmos.ltm)# "
	tests := []struct {
		name     string
		lines    []Line
		stdout   string
		stderr   string
		prompts  []string
		executed []string
	}{
		{name: "module context shows in the prompt",
			lines:   []Line{{Text: "ltm"}, {Text: "exit"}},
			prompts: []string{top, ltm, top}, executed: []string{"ltm", "exit"}},
		{name: "a block typed over lines runs once complete",
			lines:    []Line{{Text: "create ltm pool p {"}, {Text: "  monitor http"}, {Text: "}"}},
			prompts:  []string{top, "> ", "> ", top},
			stdout:   "ran: create ltm pool p {\n  monitor http\n}\n",
			executed: []string{"create ltm pool p {\n  monitor http\n}"}},
		{name: "ctrl-c abandons an open block",
			lines:    []Line{{Text: "create ltm pool p {"}, {Text: "echo fresh", Interrupted: true}},
			prompts:  []string{top, "> ", top},
			stdout:   "fresh\n",
			executed: []string{"echo fresh"}},
		{name: "question mark prints grouped help",
			lines: []Line{{Text: "create ltm ", Help: true}, {Text: "create ltm po", Help: true}, {Text: "cd /x; create ltm zz", Help: true}},
			stdout: "Modules:\n  monitor           LTM monitor templates\nComponents:\n  pool              Load balancing pool configuration\n  policy            Policy configuration\n" +
				"Components:\n  pool              Load balancing pool configuration\n  policy            Policy configuration\n" +
				"No help is available here.\n",
			prompts: []string{top, top, top, top}},
		{name: "several statements on a line, errors on stderr",
			lines:    []Line{{Text: "echo a; fail 01020036:3: nope; echo b"}},
			stdout:   "a\nb\n",
			stderr:   "01020036:3: nope\n",
			prompts:  []string{top, top},
			executed: []string{"echo a", "fail 01020036:3: nope", "echo b"}},
		{name: "quit leaves at once",
			lines:    []Line{{Text: "quit; echo never"}, {Text: "echo never"}},
			prompts:  []string{top},
			executed: []string{"quit"}},
		{name: "output piped through filters at the prompt",
			lines:    []Line{{Text: "echo a b c | grep -v z"}, {Text: "echo x | wc -c"}, {Text: "echo x | nope"}},
			prompts:  []string{top, top, top, top},
			stdout:   "a b c\n2\n",
			stderr:   "Syntax Error: \"nope\" is not a command output can be piped to; valid: cat, egrep, fgrep, grep, head, less, more, sort, tail, uniq, wc\n",
			executed: []string{"echo a b c", "echo x"}},
		{name: "question mark after a pipe offers the filters",
			lines:   []Line{{Text: "list ltm pool | he", Help: true}},
			stdout:  "  head              Print the first lines: -n N (10)\n",
			prompts: []string{top, top}},
		{name: "transaction shows in the prompt",
			lines:    []Line{{Text: "create cli transaction"}},
			prompts:  []string{top, "u@(fake)(cfg-sync Standalone)(Active)(/Common)(tmos)(cli transaction)# "},
			executed: []string{"create cli transaction"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &controltest.Backend{Suggestions: sugg}
			sess := b.NewSession("u")
			var out, errb bytes.Buffer
			var hist []string
			r := &scripted{lines: tt.lines}
			repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb, History: func(l string) { hist = append(hist, l) }}
			if err := repl.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.stdout {
				t.Errorf("stdout\n%q\nwant\n%q", out.String(), tt.stdout)
			}
			if errb.String() != tt.stderr {
				t.Errorf("stderr %q, want %q", errb.String(), tt.stderr)
			}
			if strings.Join(r.prompts, "|") != strings.Join(tt.prompts, "|") {
				t.Errorf("prompts\n%q\nwant\n%q", r.prompts, tt.prompts)
			}
			if got := b.Executed(); strings.Join(got, "|") != strings.Join(tt.executed, "|") {
				t.Errorf("executed %q, want %q", got, tt.executed)
			}
			for _, l := range hist {
				if l == "" {
					t.Error("an empty line reached the history")
				}
			}
		})
	}
}

// Ctrl-C while a command runs cancels that command, not the shell.
func TestREPLInterruptCancelsTheCommand(t *testing.T) {
	b := &controltest.Backend{Release: make(chan struct{}), Started: make(chan string, 4)}
	sess := dialFake(t, b)
	interrupts := make(chan struct{}, 1)
	r := &scripted{lines: []Line{{Text: "wait"}, {Text: "echo after"}}}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb, Interrupt: interrupts}
	go func() {
		<-b.Started // "wait" is running
		interrupts <- struct{}{}
	}()
	if err := repl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "waiting\nafter\n" || errb.String() != "interrupted\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestREPLCompleteSeesTheOpenBlock(t *testing.T) {
	rec := &recordingSession{Session: (&controltest.Backend{}).NewSession("u")}
	r := &scripted{lines: []Line{{Text: "create ltm pool p {"}}}
	repl := &REPL{Session: rec, Reader: r, Stdout: io.Discard, Stderr: io.Discard}
	r.after = map[int]func(){0: func() { repl.Complete("  mon") }}
	repl.Run(context.Background())
	if len(rec.completed) != 1 || rec.completed[0] != "create ltm pool p {\n  mon" {
		t.Fatalf("completed %q", rec.completed)
	}
}

type recordingSession struct {
	control.Session
	completed []string
}

func (r *recordingSession) Complete(line string) []control.Suggestion {
	r.completed = append(r.completed, line)
	return nil
}

func TestPromptString(t *testing.T) {
	tests := []struct {
		p    control.PromptState
		want string
	}{
		{control.PromptState{User: "root", Host: "bigip1", Folder: "/Common"}, "root@(bigip1)(cfg-sync Standalone)(Active)(/Common)(tmos)# "},
		{control.PromptState{User: "admin", Host: "b", Folder: "/Part", Module: "ltm.pool"}, "admin@(b)(cfg-sync Standalone)(Active)(/Part)(tmos.ltm.pool)# "},
		{control.PromptState{}, "root@(openltm)(cfg-sync Standalone)(Active)(/Common)(tmos)# "},
		{control.PromptState{User: "a", Host: "h", Folder: "/Common", InTransaction: true}, "a@(h)(cfg-sync Standalone)(Active)(/Common)(tmos)(cli transaction)# "},
	}
	for _, tt := range tests {
		if got := PromptString(tt.p); got != tt.want {
			t.Errorf("PromptString(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestWriteHelpWidensForLongNames(t *testing.T) {
	var b bytes.Buffer
	WriteHelp(&b, []control.Suggestion{
		{Text: "a-very-long-property-name", Description: "long", Group: "Properties"},
		{Text: "x", Description: "short", Group: "Properties"},
		{Text: "bare", Group: "Values"},
	}, "")
	want := "Properties:\n  a-very-long-property-name  long\n  x                          short\nValues:\n  bare\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestSplitInput(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"\r", []string{"\r"}},
		{"\x1b[A", []string{"\x1b[A"}},
		{"list a\nlist b\n", []string{"list a", "\r", "list b", "\r"}},
		{"x {\r\n\tmonitor http\r\n}", []string{"x {", "\r", "    monitor http", "\r", "}"}},
		// Keys typed faster than the shell reads them.
		{"cre\t", []string{"cre", "\t"}},
		{"\x1b[D\x1b[DX", []string{"\x1b[D", "\x1b[D", "X"}},
		{"ab\x1b[1;5Cc", []string{"ab", "\x1b[1;5C", "c"}},
		{"\x1bOH\x1bOF", []string{"\x1bOH", "\x1bOF"}},
		{"\x1bbx", []string{"\x1bb", "x"}},
		{"\x7f\x7fab", []string{"\x7f", "\x7f", "ab"}},
		{"list ?", []string{"list ", "?"}},
		{"\x03\x04", []string{"\x03", "\x04"}},
		{"\x1b", []string{"\x1b"}},
		{"\x1b[", []string{"\x1b["}},
		{"\x1b[1\x03", []string{"\x1b[1", "\x03"}},
		{"héllo\t", []string{"héllo", "\t"}},
		{"abc\x1b[DX\r", []string{"abc", "\x1b[D", "X", "\r"}},
		{"regexp {a?b} $x\n", []string{"regexp {a?b} $x", "\r"}},
		{"\r\r", []string{"\r", "\r"}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range splitInput([]byte(tt.in)) {
			got = append(got, string(p))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("splitInput(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestInsideQuote(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{{`a "b`, true}, {`a "b"`, false}, {`a "b\"`, true}, {`plain`, false}}
	for _, tt := range tests {
		if got := insideQuote(tt.in); got != tt.want {
			t.Errorf("insideQuote(%q) = %v", tt.in, got)
		}
	}
}

// Ctrl-C that comes after the change was committed must not claim the
// command was stopped.
func TestREPLInterruptAfterCommitSaysItWasApplied(t *testing.T) {
	b := &controltest.Backend{Started: make(chan string, 4)}
	sess := dialFake(t, b)
	interrupts := make(chan struct{}, 1)
	r := &scripted{lines: []Line{{Text: "commit-late 7"}}}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb, Interrupt: interrupts}
	go func() {
		<-b.Started
		interrupts <- struct{}{}
	}()
	if err := repl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "already been applied (generation 7") {
		t.Fatalf("stderr %q", errb.String())
	}
}

// At the prompt, load sys config default asks first; only yes runs it.
func TestREPLAsksBeforeReset(t *testing.T) {
	b := &controltest.Backend{}
	sess := dialFake(t, b)
	r := &scripted{lines: []Line{{Text: "load sys config default"}, {Text: "n"}, {Text: "load sys config default"}, {Text: "yes"}}}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb}
	if err := repl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Executed(), "|"); got != "load sys config default" {
		t.Errorf("executed %q, want one reset", got)
	}
	if !strings.Contains(out.String(), "Nothing was changed.") || !strings.Contains(strings.Join(r.prompts, "|"), "Reset the running configuration to the default") {
		t.Errorf("stdout %q, prompts %q", out.String(), r.prompts)
	}
}

// eofAfter is a LineReader answering lines, Ctrl-D (io.EOF) at the
// indexes in eof, and io.EOF once the lines run out.
type eofAfter struct {
	scripted
	eof map[int]bool
}

func (s *eofAfter) ReadLine(ctx context.Context, p LinePrompt) (Line, error) {
	if s.eof[s.n] {
		delete(s.eof, s.n)
		s.prompts = append(s.prompts, p.Text)
		return Line{}, io.EOF
	}
	return s.scripted.ReadLine(ctx, p)
}

// load sys config merge from-terminal at the prompt reads the lines that
// follow as they are (a `?` is a character there) until Ctrl-D, and
// loads them; Ctrl-C abandons them; the prompt goes on either way.
func TestREPLLoadFromTerminal(t *testing.T) {
	b := &controltest.Backend{}
	sess := b.NewSession("u")
	r := &eofAfter{scripted: scripted{lines: []Line{
		{Text: "load sys config merge from-terminal"},
		{Text: `ltm rule r { when HTTP_REQUEST { if { [HTTP::uri] matches_regex "^/a?b" } { drop } } }`},
		{Text: "ltm pool p { }"},
		{Text: "load sys config merge from-terminal"},
		{Text: "ltm pool never { }"},
		{Text: "", Interrupted: true},
		{Text: "echo after"},
	}}, eof: map[int]bool{3: true}}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb}
	if err := repl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := terminalPrompt + "\nloading (terminal):\n" +
		`ltm rule r { when HTTP_REQUEST { if { [HTTP::uri] matches_regex "^/a?b" } { drop } } }` + "\nltm pool p { }\n" +
		terminalPrompt + "\nafter\n"
	if out.String() != want || errb.String() != "interrupted\n" {
		t.Fatalf("stdout\n%q\nwant\n%q\nstderr %q", out.String(), want, errb.String())
	}
	ex := b.Executed()
	if len(ex) != 2 || !strings.HasPrefix(ex[0], "load sys config merge file ") || ex[1] != "echo after" {
		t.Fatalf("executed %q", ex)
	}
}

func TestREPLMasterKeyPrompt(t *testing.T) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		t.Skip("standard input is a terminal: the prompt would read it")
	}
	b := &controltest.Backend{}
	sess := b.NewSession("u")
	r := &scripted{lines: []Line{
		{Text: "modify sys crypto master-key prompt-for-password"},
		{Text: "pass word"},
		{Text: "pass word"},
		{Text: "modify sys crypto master-key prompt-for-password"},
		{Text: "one"},
		{Text: "two"},
	}}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb}
	var history []string
	repl.History = func(l string) { history = append(history, l) }
	if err := repl.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ex := b.Executed()
	if len(ex) != 1 || ex[0] != `modify sys crypto master-key password "pass word"` {
		t.Fatalf("executed %q", ex)
	}
	if !strings.Contains(errb.String(), "the passwords do not match") {
		t.Fatalf("stderr %q", errb.String())
	}
	if n := strings.Count(strings.Join(r.prompts, "\n"), passwordPrompt); n != 4 {
		t.Fatalf("prompts %q", r.prompts)
	}
	for _, h := range history {
		if strings.Contains(h, "pass word") || h == "one" {
			t.Fatalf("a password went into the history: %q", history)
		}
	}
}
