package rules

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// checkResult checks a command's result against want, or its error
// against wantErr (a part of the message) when that is set.
func checkResult(t *testing.T, expr, got string, err error, want, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s: error %v, want one containing %q", expr, err, wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v", expr, err)
	case wantErr == "" && got != want:
		t.Errorf("%s = %q, want %q", expr, got, want)
	}
}

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
		checkResult(t, c.expr, got, err, c.want, c.err)
		if conn.idle != c.wantIdle {
			t.Errorf("%s: idle timeout %v, want %v", c.expr, conn.idle, c.wantIdle)
		}
	}
	// A connection without an idle timeout (a DNS listener's) says so.
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "IP::idle_timeout"); err == nil || !strings.Contains(err.Error(), "have no idle timeout") {
		t.Errorf("without IdleTimer: %v", err)
	}
}

// statsConn adds side counters to the fake connection.
type statsConn struct {
	*fakeConn
	sides map[Side]FlowStats
}

func (c *statsConn) SideStats(s Side) (FlowStats, bool) {
	st, ok := c.sides[s]
	return st, ok
}

func TestIPStats(t *testing.T) {
	conn := &statsConn{fakeConn: newFakeConn(), sides: map[Side]FlowStats{
		ClientSide: {PktsIn: 3, PktsOut: 4, BytesIn: 300, BytesOut: 4000, Age: 1500 * time.Millisecond},
	}}
	cases := []struct{ expr, want, err string }{
		{expr: "IP::stats", want: "3 4 300 4000 1500"},
		{expr: "IP::stats pkts", want: "3 4"},
		{expr: "IP::stats pkts in", want: "3"},
		{expr: "IP::stats pkts out", want: "4"},
		{expr: "IP::stats bytes", want: "300 4000"},
		{expr: "IP::stats bytes in", want: "300"},
		{expr: "IP::stats bytes out", want: "4000"},
		{expr: "IP::stats in", want: "3 300"},
		{expr: "IP::stats out", want: "4 4000"},
		{expr: "IP::stats age", want: "1500"},
		{expr: "serverside { IP::stats }", err: "the serverside has no connection yet"},
		{expr: "IP::stats bytes sideways", err: `"sideways" is neither in nor out`},
		{expr: "IP::stats age in", err: "wrong # args"},
		{expr: "IP::stats flows", err: `unknown option "flows"; valid: pkts bytes in out age`},
		{expr: "IP::stats pkts in x", err: "wrong # args"},
	}
	for _, c := range cases {
		got, err := evalIn(t, conn, nil, ClientAccepted, c.expr)
		checkResult(t, c.expr, got, err, c.want, c.err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "IP::stats"); err == nil || !strings.Contains(err.Error(), "keep no statistics") {
		t.Errorf("without StatsConn: %v", err)
	}
}

// markConn records LB::down and LB::up.
type markConn struct {
	*fakeConn
	marks []string
}

func (c *markConn) MarkMember(pool string, member netip.AddrPort, up bool) error {
	if pool == "missing" {
		return fmt.Errorf("no such pool: %s", pool)
	}
	c.marks = append(c.marks, fmt.Sprintf("%s %v %v", pool, member, up))
	return nil
}

func TestLBDownUp(t *testing.T) {
	cases := []struct{ expr, want, err string }{
		{expr: "LB::down", want: " invalid AddrPort false"},
		{expr: "LB::up", want: " invalid AddrPort true"},
		{expr: "LB::down pool web member 10.0.0.1 80", want: "web 10.0.0.1:80 false"},
		{expr: "LB::down pool web member 10.0.0.1:80", want: "web 10.0.0.1:80 false"},
		{expr: "LB::up node 10.0.0.2", want: " 10.0.0.2:0 true"},
		{expr: "LB::down pool missing member 10.0.0.1 80", err: "LB::down: no such pool: missing"},
		{expr: "LB::down pool web", err: "wrong # args"},
		{expr: "LB::up member 10.0.0.1 80", err: "wrong # args"},
	}
	for _, c := range cases {
		conn := &markConn{fakeConn: newFakeConn()}
		_, err := evalIn(t, conn, nil, HTTPResponse, c.expr)
		got := strings.Join(conn.marks, ";")
		checkResult(t, c.expr, got, err, c.want, c.err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, HTTPResponse, "LB::down"); err == nil || !strings.Contains(err.Error(), "no pool members to mark") {
		t.Errorf("without MemberMarker: %v", err)
	}
}
