//go:build linux

package shell

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// Keys that reach the terminal in one read (fast typing, key repeat, input
// over SSH) must act as the same keys typed slowly.
func TestKeysTypedTogether(t *testing.T) {
	b := &controltest.Backend{Suggestions: []control.Suggestion{{Text: "create", Description: "Create an object"}}}
	s := startPty(t, serveFake(t, b))
	s.waitFor("(tmos)# ")
	// Tab right after the letters completes the word.
	s.keys("cre\t")
	s.waitFor("create")
	s.keys("\r")
	// Two Left arrows and a letter, then Enter, in one write.
	s.keys("list abc\x1b[D\x1b[DX\r")
	s.waitFor("ran: list aXbc")
	s.keys("quit\r")
	if code := s.exitCode(); code != 0 {
		t.Fatalf("exit status %d; screen:\n%s", code, s.screen())
	}
	if got := strings.Join(b.Executed(), "|"); got != "create|list aXbc|quit" {
		t.Errorf("executed %q", got)
	}
}

// Shrinking the window while a wrapped line is typed redraws it on a clean
// screen at the new width (no second prompt left behind), and keeps the
// text typed so far.
func TestResizeRedrawsTheLine(t *testing.T) {
	b := &controltest.Backend{}
	s := startPty(t, serveFake(t, b))
	s.waitFor("(tmos)# ")
	long := "echo " + strings.Repeat("x", 90)
	s.keys(long)
	s.waitFor(strings.Repeat("x", 20))
	s.mu.Lock()
	before := s.out.Len()
	s.mu.Unlock()
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Rows: 24, Cols: 40}); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGWINCH)
	for range int(patience / (20 * time.Millisecond)) {
		s.mu.Lock()
		after := s.out.String()[before:]
		s.mu.Unlock()
		if i := strings.Index(after, "\x1b[H\x1b[2J"); i >= 0 && strings.Contains(ansi.ReplaceAllString(after[i:], ""), "(tmos)# ") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	after := s.out.String()[before:]
	s.mu.Unlock()
	if !strings.Contains(after, "\x1b[H\x1b[2J") {
		t.Fatalf("no redraw after the resize; output %q", after)
	}
	s.keys("\r")
	s.waitFor("\n" + strings.Repeat("x", 90))
	s.keys("quit\r")
	s.exitCode()
	if got := b.Executed(); len(got) == 0 || got[0] != long {
		t.Fatalf("executed %q, want the line typed before the resize", got)
	}
}
