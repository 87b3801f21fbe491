package rules

import (
	"strings"
	"testing"
	"time"
)

// idleConn adds an idle timeout to the fake connection.
type idleConn struct {
	*fakeConn
	idle time.Duration
}

func (c *idleConn) FlowIdleTimeout() time.Duration     { return c.idle }
func (c *idleConn) SetFlowIdleTimeout(d time.Duration) { c.idle = d }

func TestIPIdleTimeout(t *testing.T) {
	cases := []struct {
		expr     string
		start    time.Duration
		want     string
		wantIdle time.Duration
		err      string
	}{
		{expr: "IP::idle_timeout", start: 300 * time.Second, want: "300", wantIdle: 300 * time.Second},
		{expr: "IP::idle_timeout", start: 0, want: "0"},
		{expr: "IP::idle_timeout", start: 300 * time.Millisecond, want: "1", wantIdle: 300 * time.Millisecond},
		{expr: "IP::idle_timeout 7200", start: 300 * time.Second, want: "", wantIdle: 2 * time.Hour},
		{expr: "IP::idle_timeout indefinite", start: 300 * time.Second, want: "", wantIdle: 0},
		{expr: "IP::idle_timeout 0", start: 300 * time.Second, err: `"0" is not a number of seconds from 1 to 2147483647, or indefinite`, wantIdle: 300 * time.Second},
		{expr: "IP::idle_timeout -5", start: 300 * time.Second, err: "is not a number of seconds", wantIdle: 300 * time.Second},
		{expr: "IP::idle_timeout 2147483648", start: 300 * time.Second, err: "is not a number of seconds", wantIdle: 300 * time.Second},
		{expr: "IP::idle_timeout soon", start: 300 * time.Second, err: "is not a number of seconds", wantIdle: 300 * time.Second},
		{expr: "IP::idle_timeout 1 2", start: 300 * time.Second, err: "wrong # args", wantIdle: 300 * time.Second},
	}
	for _, c := range cases {
		conn := &idleConn{fakeConn: newFakeConn(), idle: c.start}
		got, err := evalIn(t, conn, nil, ClientAccepted, c.expr)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.expr, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.expr, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s = %q, want %q", c.expr, got, c.want)
		}
		if conn.idle != c.wantIdle {
			t.Errorf("%s: idle timeout %v, want %v", c.expr, conn.idle, c.wantIdle)
		}
	}
	// A connection without an idle timeout (a DNS listener's) says so.
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "IP::idle_timeout"); err == nil || !strings.Contains(err.Error(), "have no idle timeout") {
		t.Errorf("without IdleTimer: %v", err)
	}
}
