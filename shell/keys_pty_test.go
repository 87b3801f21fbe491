//go:build linux

package shell

import (
	"strings"
	"testing"

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
