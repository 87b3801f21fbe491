package ilx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// needNode skips a test that runs real extensions where node is missing.
func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (Debian package nodejs): the iRules LX extensions cannot run")
	}
}

// extension writes an extension's index.js in a directory of its own.
func extension(t *testing.T, js string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ext")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const sampleJS = `
var f5 = require('f5-nodejs');
var ilx = new f5.ILXServer();
ilx.addMethod('echo', function(req, res) { res.reply(req.params()); });
ilx.addMethod('upper', function(req, res) { res.reply(req.params()[0].toUpperCase()); });
ilx.addMethod('obj', function(req, res) { res.reply({b: 1, a: [2, 'x y']}); });
ilx.addMethod('slow', function(req, res) { setTimeout(function() { res.reply('late'); }, 5000); });
ilx.addMethod('fail', function(req, res) { res.replyError('bad input'); });
ilx.addMethod('throw', function(req, res) { throw new Error('boom'); });
ilx.addMethod('crash', function(req, res) { process.exit(3); });
ilx.addMethod('pid', function(req, res) { res.reply(String(process.pid)); });
var seen = [];
ilx.addMethod('note', function(req, res) { seen.push(req.params()[0]); });
ilx.addMethod('seen', function(req, res) { res.reply(seen); });
ilx.listen();
`

// eventually retries f for up to 20 seconds.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newManager(t *testing.T) *Manager {
	m := New(Options{ModuleDir: filepath.Join(t.TempDir(), "node_modules"), Procs: 2})
	t.Cleanup(m.Close)
	return m
}

func call(t *testing.T, h *Ext, timeout time.Duration, method string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := h.Call(ctx, method, args)
	return string(res), err
}

// TestCalls: a real node process answers calls with strings, arrays and
// objects; replyError and a thrown exception are errors; an unknown
// method is ERR_NOT_FOUND; a call past its time is ErrTimeout; a notify
// reaches the method without an answer.
func TestCalls(t *testing.T) {
	needNode(t)
	m := newManager(t)
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: extension(t, sampleJS), Mode: Single, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	h, err := m.Handle("/Common/p", "e")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the extension answers", func() bool {
		_, err := call(t, h, 2*time.Second, "pid")
		return err == nil
	})
	m.ResetStats("/Common/p") // the calls made while node started are not counted below
	for _, c := range []struct {
		method string
		args   []string
		want   string
		err    string
	}{
		{method: "echo", args: []string{"a", "b c"}, want: `["a","b c"]`},
		{method: "upper", args: []string{"abc"}, want: `"ABC"`},
		{method: "obj", want: `{"b":1,"a":[2,"x y"]}`},
		{method: "fail", err: "bad input"},
		{method: "throw", err: "boom"},
		{method: "nosuch", err: "ERR_NOT_FOUND: no method nosuch"},
	} {
		got, err := call(t, h, 10*time.Second, c.method, c.args...)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.method, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %s, %v; want %s", c.method, got, err, c.want)
		}
	}
	if _, err := call(t, h, 300*time.Millisecond, "slow"); !errors.Is(err, ErrTimeout) {
		t.Errorf("slow: %v, want a timeout", err)
	}
	if err := h.Notify("note", []string{"n1"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the notify arrives", func() bool {
		got, _ := call(t, h, 5*time.Second, "seen")
		return got == `["n1"]`
	})
	st, _, ok := m.Stats("/Common/p")
	if !ok || len(st) != 1 || st[0].Status != "running" || st[0].Timeouts != 1 || st[0].Notifies != 1 || st[0].Calls < 8 {
		t.Errorf("stats: %+v", st)
	}
	if _, err := m.Handle("/Common/p", "other"); !errors.Is(err, ErrNoExt) {
		t.Errorf("an unknown extension: %v", err)
	}
	if _, err := m.Handle("/Common/q", "e"); !errors.Is(err, ErrNoPlugin) {
		t.Errorf("an unknown plugin: %v", err)
	}
}

// TestRestart: a process that exits is started again and answers; past
// max-restarts within restart-interval the extension is failed, and
// Restart brings it back.
func TestRestart(t *testing.T) {
	needNode(t)
	m := newManager(t)
	m.o.RestartDelay = 10 * time.Millisecond
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: extension(t, sampleJS), Mode: Single, MaxRestarts: 2, RestartInterval: time.Hour}}}})
	h, _ := m.Handle("/Common/p", "e")
	var first string
	eventually(t, "the extension answers", func() bool {
		var err error
		first, err = call(t, h, 2*time.Second, "pid")
		return err == nil
	})
	for i := range 2 {
		if _, err := call(t, h, 10*time.Second, "crash"); err == nil || !errors.Is(err, ErrNotRunning) {
			t.Fatalf("crash %d: %v, want the extension's exit", i, err)
		}
		var again string
		eventually(t, "a new process answers", func() bool {
			var err error
			again, err = call(t, h, 2*time.Second, "pid")
			return err == nil
		})
		if again == first {
			t.Errorf("the same process %s answers after a crash", again)
		}
		first = again
	}
	call(t, h, 10*time.Second, "crash")
	eventually(t, "the extension is failed", func() bool {
		st, _, _ := m.Stats("/Common/p")
		return st[0].Status == "failed" && st[0].Restarts == 2 && st[0].Failures == 1
	})
	if _, err := call(t, h, time.Second, "pid"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("a failed extension: %v", err)
	}
	if err := m.Restart("/Common/p"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restarted plugin answers", func() bool {
		_, err := call(t, h, 2*time.Second, "pid")
		return err == nil
	})
}

// TestDedicated: a dedicated extension runs a process per processor
// (here Procs), and calls go to each in turn; a changed plugin starts
// again; a disabled one refuses handles; a removed one stops.
func TestDedicated(t *testing.T) {
	needNode(t)
	m := newManager(t)
	dir := extension(t, sampleJS)
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: dir, Mode: Dedicated, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	h, _ := m.Handle("/Common/p", "e")
	eventually(t, "two processes run", func() bool {
		st, _, _ := m.Stats("/Common/p")
		return len(st[0].PIDs) == 2
	})
	pids := map[string]bool{}
	for range 4 {
		got, err := call(t, h, 10*time.Second, "pid")
		if err != nil {
			t.Fatal(err)
		}
		pids[got] = true
	}
	if len(pids) != 2 {
		t.Errorf("calls reached %d processes, want 2", len(pids))
	}
	m.Apply([]Plugin{{Name: "/Common/p", Disabled: true, Extensions: []Extension{{Name: "e", Dir: dir, Mode: Dedicated, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	if _, err := m.Handle("/Common/p", "e"); !errors.Is(err, ErrDisabled) {
		t.Errorf("a disabled plugin: %v", err)
	}
	m.Apply(nil)
	if _, _, ok := m.Stats("/Common/p"); ok {
		t.Error("a removed plugin still has stats")
	}
}
