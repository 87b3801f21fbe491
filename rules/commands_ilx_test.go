package rules

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeILX is a plugin /Common/p with an extension e whose methods answer
// from a table; "slow" waits for its context.
type fakeILX struct {
	mu       sync.Mutex
	notified []string
}

func (f *fakeILX) Init(plugin, ext string) error {
	if plugin != "/Common/p" {
		return errors.New("ILX failure: no such ilx plugin: " + plugin)
	}
	if ext != "e" {
		return errors.New("ILX failure: no such extension " + ext + " in plugin " + plugin)
	}
	return nil
}

func (f *fakeILX) Call(ctx context.Context, plugin, ext, method string, args []string) (json.RawMessage, error) {
	if err := f.Init(plugin, ext); err != nil {
		return nil, err
	}
	switch method {
	case "echo":
		b, _ := json.Marshal(args)
		return b, nil
	case "str":
		return json.RawMessage(`"hello world"`), nil
	case "obj":
		return json.RawMessage(`{"z": 1, "a": [true, null, "x y"], "m": {"k": 2.5}}`), nil
	case "fail":
		return nil, errors.New("bad input")
	case "slow":
		<-ctx.Done()
		return nil, errors.New("ILX timeout.")
	}
	return nil, errors.New("ERR_NOT_FOUND: no method " + method)
}

func (f *fakeILX) Notify(plugin, ext, method string, args []string) error {
	if err := f.Init(plugin, ext); err != nil {
		return err
	}
	f.mu.Lock()
	f.notified = append(f.notified, method+" "+strings.Join(args, ","))
	f.mu.Unlock()
	return nil
}

// TestILXCommands: ILX::init makes a handle, ILX::call returns strings
// and lists (objects as key value lists, in order), extension errors
// and timeouts are catchable Tcl errors, ILX::notify returns at once,
// and the commands check their words.
func TestILXCommands(t *testing.T) {
	f := &fakeILX{}
	env := &Env{ILX: f}
	for _, c := range []struct {
		expr, want, err string
	}{
		{expr: "ILX::init p e", want: "/Common/p/e"},
		{expr: "ILX::init /Common/p e", want: "/Common/p/e"},
		{expr: "ILX::call [ILX::init p e] echo a {b c}", want: "a {b c}"},
		{expr: "ILX::call [ILX::init p e] -timeout 500 str", want: "hello world"},
		{expr: "ILX::call [ILX::init p e] obj", want: "z 1 a {true {} {x y}} m {k 2.5}"},
		{expr: "lindex [ILX::call [ILX::init p e] obj] 3 2", want: "x y"},
		{expr: "catch {ILX::call [ILX::init p e] fail} m; set m", want: "bad input"},
		{expr: "catch {ILX::call [ILX::init p e] -timeout 50 slow} m; set m", want: "ILX timeout."},
		{expr: "ILX::call [ILX::init p e] nosuch", err: "ERR_NOT_FOUND: no method nosuch"},
		{expr: "ILX::init q e", err: "no such ilx plugin: /Common/q"},
		{expr: "ILX::init p x", err: "no such extension x"},
		{expr: "ILX::init p", err: "wrong # args"},
		{expr: "ILX::call bogus m", err: "is not an ILX handle"},
		{expr: "ILX::call /Common/p/e -timeout soon m", err: "-timeout expects milliseconds"},
		{expr: "ILX::notify [ILX::init p e] note 1 2", want: ""},
	} {
		got, err := evalIn(t, newFakeConn(), env, ClientAccepted, c.expr)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want an error with %q", c.expr, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	if len(f.notified) != 1 || f.notified[0] != "note 1,2" {
		t.Errorf("notified: %q", f.notified)
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "ILX::init p e"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("without ILX: %v", err)
	}
}

// TestILXCallWaits: a rule with ILX::call waits (its connections leave
// the event loops), one with only ILX::notify does not; on a Blocker a
// call waits past the event's own deadline.
func TestILXCallWaits(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"when HTTP_REQUEST { set h [ILX::init p e]; set r [ILX::call $h m] }", true},
		{"when HTTP_REQUEST { ILX::notify [ILX::init p e] m }", false},
	} {
		r := mustCompile(t, "w", c.body)
		if got := NewProgram(&Env{}, r).Waits(); got != c.want {
			t.Errorf("%q: Waits %v, want %v", c.body, got, c.want)
		}
	}
	env := &Env{ILX: &fakeILX{}, Timeout: 50 * time.Millisecond}
	got, err := evalIn(t, blockConn{newFakeConn()}, env, ClientAccepted, "catch {ILX::call [ILX::init p e] -timeout 200 slow} m; set m")
	if err != nil || got != "ILX timeout." {
		t.Errorf("on a Blocker: %q, %v", got, err)
	}
}
