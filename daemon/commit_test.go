package daemon

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/objects"
)

// recHook is a runtime that records what the engine asks of it, and fails
// the step it is told to.
type recHook struct {
	name   string
	log    *[]string
	failAt string // "prepare" or "commit"
}

func (h *recHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	*h.log = append(*h.log, h.name+" prepare")
	if h.failAt == "prepare" {
		return nil, objects.Invalid("%s refuses", h.name)
	}
	return &recChange{h: h}, nil
}

type recChange struct {
	h         *recHook
	committed bool
}

func (c *recChange) Commit() error {
	*c.h.log = append(*c.h.log, c.h.name+" commit")
	if c.h.failAt == "commit" {
		return errors.New(c.h.name + " cannot run it")
	}
	c.committed = true
	return nil
}

func (c *recChange) Abort() {
	if c.committed {
		*c.h.log = append(*c.h.log, c.h.name+" undo")
		return
	}
	*c.h.log = append(*c.h.log, c.h.name+" discard")
}

// A commit prepares every hook once, then commits each; any failure ends
// every change, undoing those committed, last first, and stores nothing.
func TestCommitPreparesThenCommitsOrAbortsAll(t *testing.T) {
	cases := []struct {
		name       string
		fail       map[string]string // hook -> step
		closeStore bool
		want       string
		err        string
	}{
		{"all good", nil, false,
			"a prepare, b prepare, c prepare, a commit, b commit, c commit", ""},
		{"a refusal", map[string]string{"b": "prepare"}, false,
			"a prepare, b prepare, a discard", "b refuses"},
		{"a failed commit", map[string]string{"c": "commit"}, false,
			"a prepare, b prepare, c prepare, a commit, b commit, c commit, c discard, b undo, a undo", "c cannot run it"},
		{"storing fails", nil, true,
			"a prepare, b prepare, c prepare, a commit, b commit, c commit, c undo, b undo, a undo", "storing the configuration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := openTest(t, t.TempDir())
			t.Cleanup(func() { e.Close() })
			var log []string
			var hooks []*recHook
			for _, n := range []string{"a", "b", "c"} {
				h := &recHook{name: n, log: &log}
				if err := e.AddHook(h); err != nil {
					t.Fatal(err)
				}
				hooks = append(hooks, h)
			}
			for _, h := range hooks {
				h.failAt = tc.fail[h.name]
			}
			log = nil
			if tc.closeStore {
				e.store.Close()
			}
			gen := e.Generation()
			_, errText := run(t, e.NewSession("admin").(*Session), "create ltm pool p")
			if got := strings.Join(log, ", "); got != tc.want {
				t.Errorf("hooks saw\n  %s\nwant\n  %s", got, tc.want)
			}
			if !strings.Contains(errText, tc.err) || (tc.err == "") != (errText == "") {
				t.Errorf("error %q, want %q", errText, tc.err)
			}
			if tc.err != "" && (e.Generation() != gen || e.Config().Lookup(e.schema, []string{"ltm pool"}, "p") != nil) {
				t.Errorf("a failed commit changed the running configuration (generation %d, was %d)", e.Generation(), gen)
			}
		})
	}
}

// A verify prepares and discards: nothing runs, nothing is stored.
func TestVerifyOnlyPrepares(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	var log []string
	if err := e.AddHook(&recHook{name: "a", log: &log}); err != nil {
		t.Fatal(err)
	}
	log = nil
	cfg := e.Config().Clone()
	if err := e.checkHooks(e.Config(), cfg, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, ", "); got != "a prepare, a discard" {
		t.Errorf("hooks saw %s", got)
	}
}

// When a later hook or the store fails, the dataplane goes back to the
// configuration it ran: the new virtual server stops listening, the old
// one listens again.
func TestFailedCommitPutsThePlaneBack(t *testing.T) {
	for _, step := range []string{"commit", "store"} {
		t.Run(step, func(t *testing.T) {
			e, _ := openWithPlane(t, t.TempDir())
			labelServer(t, "127.0.33.11:9000", "S1 Response")
			s := e.NewSession("admin").(*Session)
			for _, c := range []string{
				"create ltm pool p members add { 127.0.33.11:9000 }",
				"create ltm virtual vs1 destination 127.0.33.1:9000 pool p",
			} {
				if _, err := run(t, s, c); err != "" {
					t.Fatalf("%s: %s", c, err)
				}
			}
			var log []string
			h := &recHook{name: "late", log: &log}
			if err := e.AddHook(h); err != nil {
				t.Fatal(err)
			}
			if step == "commit" {
				h.failAt = "commit"
			} else {
				e.store.Close()
			}
			if _, err := run(t, s, "modify ltm virtual vs1 destination 127.0.33.2:9000"); err == "" {
				t.Fatal("the change was accepted")
			}
			if a := answer("127.0.33.2:9000"); !strings.Contains(a, "refused") {
				t.Errorf("the new destination answers %q after the change was undone", a)
			}
			if a := answer("127.0.33.1:9000"); a != "S1 Response" {
				t.Errorf("the running destination answers %q", a)
			}
		})
	}
}

// answer is the line a virtual server at addr answers "hello" with, or
// the error that stopped it.
func answer(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "hello\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(line)
}

// Preparing a change runs no rule: RULE_INIT runs when the rules go in
// service, and a commit that is undone brings back the programs it
// replaced, initialised again.
func TestRuleInitRunsOnlyInService(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm rule init {\nwhen RULE_INIT { set static::greeting \"one\" }\n}",
		"create ltm rule answer {\nwhen CLIENT_ACCEPTED { TCP::respond \"$static::greeting\\n\"; TCP::close }\n}",
		"create ltm virtual vs destination 127.0.33.21:9000 rules { init answer }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if a := askVS(t, "127.0.33.21:9000", "x"); a != "one" {
		t.Fatalf("answer %q", a)
	}
	two := "modify ltm rule init {\nwhen RULE_INIT { set static::greeting \"two\" }\n}"
	cfg := e.Config().Clone()
	k := e.schema.Kind("ltm rule")
	r := cfg.Get(k, "/Common/init").Clone()
	r.Props["definition"].Str = "when RULE_INIT { set static::greeting \"two\" }"
	cfg.Put(r)
	if err := e.checkHooks(e.Config(), cfg, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if a := askVS(t, "127.0.33.21:9000", "x"); a != "one" {
		t.Errorf("after a verify: answer %q, want the running rule's", a)
	}
	var log []string
	h := &recHook{name: "late", log: &log}
	if err := e.AddHook(h); err != nil {
		t.Fatal(err)
	}
	h.failAt = "commit"
	if _, err := run(t, s, two); err == "" {
		t.Fatal("the change was accepted")
	}
	if a := askVS(t, "127.0.33.21:9000", "x"); a != "one" {
		t.Errorf("after an undone commit: answer %q, want the running rule's", a)
	}
	h.failAt = ""
	if _, err := run(t, s, two); err != "" {
		t.Fatal(err)
	}
	if a := askVS(t, "127.0.33.21:9000", "x"); a != "two" {
		t.Errorf("after the commit: answer %q", a)
	}
}
