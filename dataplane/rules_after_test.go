package dataplane

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// afterTicks counts the log lines "tick <port>" of one client.
func afterTicks(lg *ruleLog, c net.Conn) int {
	port := strconv.Itoa(c.LocalAddr().(*net.TCPAddr).Port)
	n := 0
	for _, l := range lg.Lines() {
		if strings.HasSuffix(l, ": tick "+port) {
			n++
		}
	}
	return n
}

// settledTicks waits for a client's ticks to stop (its periodic script
// cancelled) and returns their count; ok is false when they go on.
func settledTicks(lg *ruleLog, c net.Conn) (n int, ok bool) {
	n = afterTicks(lg, c)
	for range 3 {
		time.Sleep(350 * time.Millisecond)
		m := afterTicks(lg, c)
		if m == n {
			return n, true
		}
		n = m
	}
	return n, false
}

// isReset reports whether err is the peer's reset.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// TestAfterL4 runs `after` on an L4 virtual: the idle guard that answers
// and resets a client that sends nothing in 300 ms (and leaves one that
// does alone), and a periodic log stopped by `after cancel` or by the
// client closing.
func TestAfterL4(t *testing.T) {
	t.Parallel()
	startServer(t, "127.80.0.2:80", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.80.0.1:80", "127.80.0.2:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED {
    TCP::collect
    set guard [after 300 { TCP::respond "timeout"; reject }]
    set tick [after 100 -periodic { log local0. "tick [TCP::client_port]" }]
}
when CLIENT_DATA {
    after cancel $guard
    if { [TCP::payload] contains "stop" } {
        after cancel $tick
    }
    TCP::release
    TCP::collect
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)

	t.Run("silent client gets timeout and a reset", func(t *testing.T) {
		c := dial(t, "127.80.0.1:80")
		got, err := readAll(t, c)
		if got != "timeout" || !isReset(err) {
			t.Fatalf("read %q, %v; want timeout and a reset", got, err)
		}
		if n, ok := settledTicks(lg, c); !ok || n < 1 || n > 5 {
			t.Errorf("%d ticks (settled %v), want 1 to 5 and none once reset", n, ok)
		}
	})
	t.Run("client that sends in time is served, its ticks stop on cancel", func(t *testing.T) {
		c := dial(t, "127.80.0.1:80")
		time.Sleep(50 * time.Millisecond)
		br := bufio.NewReader(c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "hello\n")
		if l, err := br.ReadString('\n'); l != "S1 Response\n" {
			t.Fatalf("read %q, %v", l, err)
		}
		time.Sleep(400 * time.Millisecond) // past the guard: still served
		io.WriteString(c, "stop\n")
		if l, err := br.ReadString('\n'); l != "S1 Response\n" {
			t.Fatalf("after the guard's time, read %q, %v", l, err)
		}
		if n, ok := settledTicks(lg, c); !ok || n < 2 || n > 30 {
			t.Errorf("%d ticks (settled %v), want 2 to 30 and none after cancel", n, ok)
		}
		io.WriteString(c, "again\n")
		if l, err := br.ReadString('\n'); l != "S1 Response\n" {
			t.Fatalf("read %q, %v", l, err)
		}
	})
	t.Run("ticks stop when the client closes", func(t *testing.T) {
		c := dial(t, "127.80.0.1:80")
		io.WriteString(c, "hello\n")
		br := bufio.NewReader(c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if l, err := br.ReadString('\n'); l != "S1 Response\n" {
			t.Fatalf("read %q, %v", l, err)
		}
		time.Sleep(350 * time.Millisecond)
		c.Close()
		if n, ok := settledTicks(lg, c); !ok || n < 1 || n > 30 {
			t.Errorf("%d ticks (settled %v), want 1 to 30 and none after the close", n, ok)
		}
	})
}

// dial connects to a virtual, closing the connection with the test.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAfterHTTP runs the same on an HTTP virtual: a client that sends no
// request within 300 ms is reset, one that does is served past that
// time, and a periodic log stops on `after cancel` or the client's close.
func TestAfterHTTP(t *testing.T) {
	t.Parallel()
	startHTTPServer(t, "127.80.1.2:80", "WEB")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.80.1.1:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.80.1.2:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED {
    set guard [after 300 { reject }]
    set tick [after 100 -periodic { log local0. "tick [TCP::client_port]" }]
}
when HTTP_REQUEST {
    after cancel $guard
    if { [HTTP::path] eq "/stop" } {
        after cancel $tick
    }
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)

	t.Run("silent client is reset", func(t *testing.T) {
		c := dial(t, "127.80.1.1:80")
		got, err := readAll(t, c)
		if got != "" || !isReset(err) {
			t.Fatalf("read %q, %v; want a reset", got, err)
		}
		if n, ok := settledTicks(lg, c); !ok || n < 1 || n > 5 {
			t.Errorf("%d ticks (settled %v), want 1 to 5 and none once reset", n, ok)
		}
	})
	t.Run("client that sends in time is served, its ticks stop on cancel", func(t *testing.T) {
		h := dialHTTPVS(t, "127.80.1.1:80")
		if r, body, err := h.do(httpReq("a.example", "/one")); err != nil || r.StatusCode != 200 || !strings.HasPrefix(body, "WEB") {
			t.Fatalf("first request: %v %q", err, body)
		}
		time.Sleep(400 * time.Millisecond)
		if r, body, err := h.do(httpReq("a.example", "/stop")); err != nil || r.StatusCode != 200 || !strings.HasPrefix(body, "WEB") {
			t.Fatalf("request past the guard's time: %v %q", err, body)
		}
		if n, ok := settledTicks(lg, h.c); !ok || n < 2 || n > 30 {
			t.Errorf("%d ticks (settled %v), want 2 to 30 and none after cancel", n, ok)
		}
	})
	t.Run("ticks stop when the client closes", func(t *testing.T) {
		h := dialHTTPVS(t, "127.80.1.1:80")
		if _, _, err := h.do(httpReq("a.example", "/one")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(350 * time.Millisecond)
		h.c.Close()
		if n, ok := settledTicks(lg, h.c); !ok || n < 1 || n > 30 {
			t.Errorf("%d ticks (settled %v), want 1 to 30 and none after the close", n, ok)
		}
	})
}
