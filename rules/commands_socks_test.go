package rules

import (
	"errors"
	"strings"
	"testing"
)

// socksConn has a SOCKS request to decide (nil: outside SOCKS_REQUEST).
type socksConn struct {
	*fakeConn
	st   *SOCKSState
	dest string
}

func (c *socksConn) SOCKS() *SOCKSState { return c.st }

// TestSOCKSCommands: SOCKS:: commands read and change the request; bad
// values, a virtual without a socks profile and another event are Tcl
// errors that change nothing.
func TestSOCKSCommands(t *testing.T) {
	for _, tc := range []struct {
		script, want string
		allowed      bool   // after
		dest         string // after
		outside      bool   // no request (another event)
		plain        bool   // a virtual without a socks profile
		err          string
	}{
		{script: "SOCKS::version", want: "5", allowed: true, dest: "a.test:80"},
		{script: "SOCKS::destination", want: "a.test:80", allowed: true, dest: "a.test:80"},
		{script: "SOCKS::allowed", want: "1", allowed: true, dest: "a.test:80"},
		{script: "SOCKS::allowed 0; SOCKS::allowed", want: "0", dest: "a.test:80"},
		{script: "SOCKS::allowed false", dest: "a.test:80"},
		{script: "SOCKS::destination 127.103.0.9:8080; SOCKS::destination", want: "127.103.0.9:8080", allowed: true, dest: "127.103.0.9:8080"},
		{script: "SOCKS::allowed maybe", allowed: true, dest: "a.test:80", err: "expected boolean"},
		{script: "SOCKS::destination nonsense", allowed: true, dest: "a.test:80", err: "want ADDR:PORT"},
		{script: "SOCKS::destination a b", allowed: true, dest: "a.test:80", err: "wrong # args"},
		{script: "SOCKS::version 4", allowed: true, dest: "a.test:80", err: "wrong # args"},
		{script: "SOCKS::destination", allowed: true, dest: "a.test:80", outside: true, err: "only valid in SOCKS_REQUEST"},
		{script: "SOCKS::version", allowed: true, dest: "a.test:80", plain: true, err: "no socks profile"},
	} {
		c := &socksConn{fakeConn: newFakeConn(), dest: "a.test:80"}
		st := &SOCKSState{Version: 5, Allowed: true,
			Destination: func() string { return c.dest },
			SetDestination: func(s string) error {
				if !strings.Contains(s, ":") {
					return errors.New(s + ": want ADDR:PORT or NAME:PORT")
				}
				c.dest = s
				return nil
			}}
		if !tc.outside {
			c.st = st
		}
		var conn Conn = c
		if tc.plain {
			conn = c.fakeConn
		}
		got, err := evalIn(t, conn, nil, SOCKSRequest, "eval {"+tc.script+"}")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %q, %v; want error %q", tc.script, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.script, got, err, tc.want)
		}
		if st.Allowed != tc.allowed || c.dest != tc.dest {
			t.Errorf("%s: allowed %v dest %q; want %v %q", tc.script, st.Allowed, c.dest, tc.allowed, tc.dest)
		}
	}
}
