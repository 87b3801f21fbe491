package rules

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// TestProgramWaits: a rule that suspends an event (`after ms`, a literal
// or a variable, anywhere in a when block or a proc) makes its program
// Waits, as does a command that waits on the network (sideband connect
// and recv, RESOLV::lookup); a scheduled script, cancel and info do not.
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
		{"when HTTP_REQUEST { set c [connect 127.0.0.1:9]; send $c x; recv 2 $c; close $c }", true},
		{"when HTTP_REQUEST { set a [RESOLV::lookup @127.0.0.1 -a example.com] }", true},
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

// TestSidebandWaitsOnBlocker: a sideband recv waits its whole -timeout
// on a Blocker, past the event's deadline (the wait moves it), and gets
// a slow server's answer; elsewhere the wait stops at the deadline.
func TestSidebandWaitsOnBlocker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				bufio.NewReader(c).ReadString('\n')
				time.Sleep(300 * time.Millisecond)
				io.WriteString(c, "late\n")
			}()
		}
	}()
	body := `when CLIENT_ACCEPTED {
    set c [connect -timeout 1000 ` + ln.Addr().String() + `]
    send $c "hi\n"
    set got [recv -eol -timeout 2000 -status st $c]
    close $c
}`
	for _, tc := range []struct {
		name      string
		conn      Conn
		got, stat string
	}{
		{"blocker", blockConn{newFakeConn()}, "late\n", "received"},
		{"event loop", newFakeConn(), "", "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewProgram(&Env{Timeout: 100 * time.Millisecond}, mustCompile(t, "sb", body)).NewConnState(tc.conn)
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			got, _ := s.Var("got")
			st, _ := s.Var("st")
			if got != tc.got || st != tc.stat {
				t.Errorf("recv: %q, status %q; want %q, %q", got, st, tc.got, tc.stat)
			}
		})
	}
}
