//go:build linux

package shell

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// childEnv makes the test binary act as tmsh (see TestMain), so the pty
// tests drive the real entry point in its own process with its own
// controlling terminal.
const childEnv = "OPENLTM_SHELL_TEST_AS_TMSH"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Run(Options{}))
	}
	os.Exit(m.Run())
}

// keyGap spaces keystrokes: go-prompt reads the terminal every 10ms and
// treats one read as one key, so keys written together would merge.
const keyGap = 80 * time.Millisecond

var ansi = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|[()][A-Z0-9])`)

type ptySession struct {
	t     *testing.T
	ptmx  *os.File
	tty   *os.File
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer
	state string
	// initial is the terminal's settings before tmsh started.
	initial *unix.Termios
}

// startPty runs tmsh on a fresh 80x24 pty against the daemon at socket.
func startPty(t *testing.T, socket string) *ptySession {
	t.Helper()
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no /dev/ptmx")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("cannot open a pty: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, ptmx: ptmx, tty: tty, state: t.TempDir()}
	// The terminal's settings before tmsh can touch them: what it must
	// give back.
	s.initial = s.termios()
	s.cmd = exec.Command(os.Args[0], "-test.run=^$")
	s.cmd.Env = append(os.Environ(), childEnv+"=1", control.EnvSocket+"="+socket, control.EnvStateDir+"="+s.state, "TERM=xterm")
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, tty
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *ptySession) termios() *unix.Termios {
	s.t.Helper()
	tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	if err != nil {
		s.t.Fatal(err)
	}
	return tio
}

// screen is everything tmsh wrote, escape sequences removed.
func (s *ptySession) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.ReplaceAllString(s.out.String(), "")
}

// waitFor waits until the screen holds want; patience is only a deadline
// for failing, never a measured time.
func (s *ptySession) waitFor(want string) {
	s.t.Helper()
	for range int(patience / (20 * time.Millisecond)) {
		if strings.Contains(s.screen(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("screen never showed %q; it shows:\n%s", want, s.screen())
}

// keys types each argument as one separate write.
func (s *ptySession) keys(keys ...string) {
	for _, k := range keys {
		time.Sleep(keyGap)
		if _, err := s.ptmx.Write([]byte(k)); err != nil {
			s.t.Fatal(err)
		}
	}
}

// write types b at once, without waiting first.
func (s *ptySession) write(b string) {
	if _, err := s.ptmx.Write([]byte(b)); err != nil {
		s.t.Fatal(err)
	}
}

// exitCode waits for tmsh to end.
func (s *ptySession) exitCode() int {
	s.t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(patience):
		s.t.Fatalf("tmsh did not exit; screen:\n%s", s.screen())
	}
	return -1
}

func sameTermios(a, b *unix.Termios) bool {
	return a.Iflag == b.Iflag && a.Oflag == b.Oflag && a.Cflag == b.Cflag && a.Lflag == b.Lflag && a.Cc == b.Cc
}

func TestInteractiveOnAPty(t *testing.T) {
	b := &controltest.Backend{Suggestions: []control.Suggestion{{Text: "pool", Description: "Load balancing pool configuration", Group: "Components"}}}
	s := startPty(t, serveFake(t, b))
	before := s.initial // read before tmsh started, which may already have set raw mode

	s.waitFor("(tmos)# ")
	s.keys("e", "c", "h", "o", " ", "h", "i", "\r")
	s.waitFor("\nhi\r\n")
	s.keys("create ltm ", "?")
	s.waitFor("Components:\r\n  pool              Load balancing pool configuration")
	s.keys("\x03")
	// A pasted block arrives as one read; it must run, line by line.
	s.keys("create ltm pool p {\n\tmonitor http\n}\n")
	s.waitFor("ran: create ltm pool p {\r\n    monitor http\r\n}")
	s.keys("quit", "\r")
	if code := s.exitCode(); code != 0 {
		t.Fatalf("exit status %d; screen:\n%s", code, s.screen())
	}
	if got := b.Executed(); strings.Join(got, "|") != "echo hi|create ltm pool p {\n    monitor http\n}|quit" {
		t.Errorf("executed %q (Ctrl-C should have dropped %q)", got, "create ltm ")
	}
	if after := s.termios(); !sameTermios(before, after) {
		t.Errorf("terminal not restored: lflag %#x -> %#x, iflag %#x -> %#x", before.Lflag, after.Lflag, before.Iflag, after.Iflag)
	}
	hist, _ := os.ReadFile(filepath.Join(s.state, historyFile))
	if string(hist) != "echo hi\ncreate ltm pool p {\n    monitor http\n}\nquit\n" {
		t.Errorf("history file %q", hist)
	}
}

func TestInteractiveRestoresTerminalOnSIGTERM(t *testing.T) {
	s := startPty(t, serveFake(t, &controltest.Backend{}))
	before := s.initial
	s.waitFor("(tmos)# ")
	s.keys("list")
	time.Sleep(keyGap)
	if raw := s.termios(); raw.Lflag&unix.ECHO != 0 {
		t.Fatal("the prompt is not in raw mode; the test proves nothing")
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.exitCode(); code != ExitInterrupted {
		t.Fatalf("exit status %d, want %d", code, ExitInterrupted)
	}
	if after := s.termios(); !sameTermios(before, after) {
		t.Errorf("terminal not restored after SIGTERM: lflag %#x -> %#x", before.Lflag, after.Lflag)
	}
}

// A fresh terminal can report 0x0; go-prompt would divide by zero.
func TestZeroWindowSizeIsReplaced(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("cannot open a pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 0, Cols: 0})
	tt, err := newTTY(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	// Stdout (fd 1) may be a real terminal with a size; only the shape of
	// the answer is checked.
	if ws := tt.GetWinSize(); ws.Col == 0 || ws.Row == 0 {
		t.Fatalf("window size %dx%d", ws.Col, ws.Row)
	}
}

// load sys config merge from-terminal on a real terminal: a pasted
// configuration (its `?` a character, not help) ends with Ctrl-D, and
// the prompt comes back.
func TestInteractiveLoadFromTerminal(t *testing.T) {
	b := &controltest.Backend{}
	s := startPty(t, serveFake(t, b))
	s.waitFor("(tmos)# ")
	s.keys("load sys config merge from-terminal", "\r")
	s.waitFor(terminalPrompt)
	// Typed ahead as an expect script would: at once after the prompt,
	// Ctrl-D while the lines before it may still be being read.
	s.write("ltm pool p {\n    description \"a?b\"\n}\n")
	time.Sleep(time.Millisecond)
	s.write("\x04")
	s.waitFor("loading (terminal):\r\nltm pool p {\r\n    description \"a?b\"\r\n}")
	s.keys("quit", "\r")
	if code := s.exitCode(); code != 0 {
		t.Fatalf("exit status %d; screen:\n%s", code, s.screen())
	}
	if got := b.Executed(); len(got) != 2 || !strings.HasPrefix(got[0], "load sys config merge file ") || got[1] != "quit" {
		t.Fatalf("executed %q", got)
	}
}
