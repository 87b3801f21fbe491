package rules

import (
	"testing"
)

// TestProgramWaits: a rule that suspends an event (`after ms`, a literal
// or a variable, anywhere in a when block or a proc) makes its program
// Waits; a scheduled script, cancel and info do not.
func TestProgramWaits(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"when HTTP_REQUEST { after 2000 }", true},
		{"when HTTP_REQUEST { if {[HTTP::path] eq \"/login\"} { after 2000 } }", true},
		{"when HTTP_REQUEST { set d 100; after $d }", true},
		{"proc tarpit {} { after 100 }\nwhen HTTP_REQUEST { call tarpit }", true},
		{"when HTTP_REQUEST { after 100 { log local0. x } }", false},
		{"when HTTP_REQUEST { set id [after 100 { log local0. x }]; after cancel $id }", false},
		{"when HTTP_REQUEST { log local0. [after info] }", false},
		{"when HTTP_REQUEST { log local0. x }", false},
	} {
		r := mustCompile(t, "w", c.body)
		if got := NewProgram(&Env{}, r).Waits(); got != c.want {
			t.Errorf("%q: Waits %v, want %v", c.body, got, c.want)
		}
	}
	var p *Program
	if p.Waits() {
		t.Error("a nil program waits")
	}
}

// blockConn is a connection whose events have a goroutine of their own.
type blockConn struct{ *fakeConn }

func (blockConn) MayBlock() bool { return true }

// TestAfterSuspends: on a Blocker, `after ms` waits past the interpreter's
// sleep budget and the event's deadline (the wait moves it) and the event
// goes on; elsewhere the same wait is over budget, a Tcl error; a wait
// past MaxSuspend is refused at once.
func TestAfterSuspends(t *testing.T) {
	env := &Env{Timeout: 100e6} // 100 ms of work per event
	got, err := evalIn(t, blockConn{newFakeConn()}, env, ClientAccepted, "after 150; after 150; expr 1+1")
	if err != nil || got != "2" {
		t.Errorf("on a Blocker: %q, %v; want 2", got, err)
	}
	if _, err := evalIn(t, newFakeConn(), env, ClientAccepted, "after 150; expr 1+1"); err == nil {
		t.Error("a wait past the deadline on a Conn that may not block: no error")
	}
	if _, err := evalIn(t, blockConn{newFakeConn()}, env, ClientAccepted, "after 400000"); err == nil {
		t.Error("a wait past MaxSuspend: no error")
	}
}
