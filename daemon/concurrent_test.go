package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Fifty admins at once, each changing its own object: every command is
// applied in its turn, none is refused, and each makes one generation.
func TestParallelSessionsAllCommit(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	setup := e.NewSession("admin").(*Session)
	for i := range 50 {
		if _, errText := run(t, setup, fmt.Sprintf("create ltm pool pre%d", i)); errText != "" {
			t.Fatal(errText)
		}
	}
	before := e.Generation()
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := e.NewSession(fmt.Sprintf("admin%d", i)).(*Session)
			var cmd string
			switch i % 3 {
			case 0:
				cmd = fmt.Sprintf("create ltm pool new%d members add { 127.0.0.%d:80 }", i, i+1)
			case 1:
				cmd = fmt.Sprintf("modify ltm pool pre%d description changed", i)
			default:
				cmd = fmt.Sprintf("delete ltm pool pre%d", i)
			}
			errs[i] = s.Exec(context.Background(), cmd, &strings.Builder{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("shell %d: %v", i, err)
		}
	}
	if got := e.Generation() - before; got != 50 {
		t.Errorf("%d generations, want 50", got)
	}
	for i := range 50 {
		var want bool
		switch i % 3 {
		case 0:
			want = e.Config().Get(ltmPool, fmt.Sprintf("/Common/new%d", i)) != nil
		case 1:
			o := e.Config().Get(ltmPool, fmt.Sprintf("/Common/pre%d", i))
			want = o != nil && o.Str("description") == "changed"
		default:
			want = e.Config().Get(ltmPool, fmt.Sprintf("/Common/pre%d", i)) == nil
		}
		if !want {
			t.Errorf("shell %d's change is not in the running configuration", i)
		}
	}
}

// A real conflict still fails: two admins delete the same pool; one wins.
func TestParallelConflictFailsOne(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	run(t, e.NewSession("admin").(*Session), "create ltm pool shared")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.NewSession("admin").(*Session).Exec(context.Background(), "delete ltm pool shared", &strings.Builder{})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("errors %v / %v: want exactly one to fail", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "was not found") {
			t.Errorf("the loser says %q, want that the pool was not found", err)
		}
	}
}

// Interrupted before its turn, a change applies nothing; the session says
// which generation a command committed.
func TestChangeInterruptedAppliesNothing(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := e.Generation()
	err := s.Exec(ctx, "create ltm pool late", &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || e.Generation() != before || s.LastCommitted() != 0 {
		t.Fatalf("err %v, generation %d -> %d, committed %d", err, before, e.Generation(), s.LastCommitted())
	}
	if err := s.Exec(context.Background(), "create ltm pool early", &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	if s.LastCommitted() != e.Generation() {
		t.Fatalf("LastCommitted %d, running %d", s.LastCommitted(), e.Generation())
	}
	run(t, s, "list ltm pool early")
	if s.LastCommitted() != 0 {
		t.Fatalf("a list committed %d", s.LastCommitted())
	}
}
