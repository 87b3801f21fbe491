package rules

import (
	"errors"
	"strings"
	"testing"
)

// limitConn is a connection that keeps LB::connlimit's limits.
type limitConn struct {
	*fakeConn
	limits [3]int64
	keys   [3]string
}

func (c *limitConn) SetConnLimit(s LimitScope, n int64, key string) error {
	c.limits[s], c.keys[s] = n, key
	return nil
}
func (c *limitConn) ConnLimit(s LimitScope) int64 { return c.limits[s] }

// TestConnLimitCommand: LB::connlimit sets and reads a limit per object;
// bad objects, counts and forms are Tcl errors; a connection whose
// balancing takes no rule limits says so.
func TestConnLimitCommand(t *testing.T) {
	for _, tc := range []struct{ expr, want, err string }{
		{"LB::connlimit poolmember limit 5; LB::connlimit poolmember", "5", ""},
		{"LB::connlimit node limit 2; LB::connlimit virtual", "0", ""},
		{"LB::connlimit virtual limit 7; LB::connlimit virtual limit 0; LB::connlimit virtual", "0", ""},
		{"LB::connlimit member limit 5", "", "bad object"},
		{"LB::connlimit poolmember limit -1", "", "connection count"},
		{"LB::connlimit poolmember limit x", "", "connection count"},
		{"LB::connlimit poolmember size 3", "", "wrong # args"},
		{"LB::connlimit", "", "wrong # args"},
		{"LB::connlimit node limit 1 key k; LB::connlimit node", "1 k", ""},
		{"LB::connlimit poolmember key [IP::client_addr] limit 2; LB::connlimit poolmember", "2 127.0.0.9", ""},
		{"LB::connlimit virtual limit 3 key a; LB::connlimit virtual limit 4; LB::connlimit virtual", "4 ", ""},
		{"LB::connlimit poolmember limit 3 key a; LB::connlimit poolmember key b", "3 a", ""},
		{"LB::connlimit poolmember limit 1 key", "", "wrong # args"},
		{"LB::connlimit poolmember limit 1 limit 2", "", "wrong # args"},
		{"LB::connlimit poolmember key a key b", "", "wrong # args"},
		{"LB::connlimit poolmember limit 1 key a extra b", "", "wrong # args"},
	} {
		c := &limitConn{fakeConn: newFakeConn()}
		got, err := evalIn(t, c, &Env{}, ClientAccepted, tc.expr)
		if err == nil && strings.Contains(tc.want, " ") {
			// The key the last set left, after the limit read.
			got += " " + c.keys[map[string]LimitScope{"virtual": LimitVirtual, "node": LimitNode, "poolmember": LimitPoolMember}[strings.Fields(tc.expr)[1]]]
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.expr, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s = %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "LB::connlimit poolmember limit 1"); err == nil || !strings.Contains(err.Error(), "no rule limits") {
		t.Errorf("on a connection without rule limits: %v", err)
	}
}

// offsetConn counts 42 bytes on the client side and has no server side.
type offsetConn struct{ *fakeConn }

func (offsetConn) StreamOffset(s Side) (int64, error) {
	if s == ServerSide {
		return 0, errNoServer
	}
	return 42, nil
}

var errNoServer = errors.New("no server connection yet")

// TestTCPOffsetCommand: TCP::offset answers the event side's position,
// and says why when it has none.
func TestTCPOffsetCommand(t *testing.T) {
	c := offsetConn{newFakeConn()}
	if got, err := evalIn(t, c, &Env{}, ClientData, "TCP::offset"); err != nil || got != "42" {
		t.Errorf("TCP::offset in CLIENT_DATA = %q, %v", got, err)
	}
	if _, err := evalIn(t, c, &Env{}, ServerData, "TCP::offset"); err == nil || !strings.Contains(err.Error(), "no server connection") {
		t.Errorf("TCP::offset without a server side: %v", err)
	}
	if _, err := evalIn(t, c, &Env{}, ClientData, "TCP::offset 3"); err == nil || !strings.Contains(err.Error(), "wrong # args") {
		t.Errorf("TCP::offset 3: %v", err)
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientData, "TCP::offset"); err == nil || !strings.Contains(err.Error(), "no TCP byte stream") {
		t.Errorf("on a connection without counts: %v", err)
	}
}
