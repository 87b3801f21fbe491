package rules

import (
	"strings"
	"testing"
)

// arrivalConn came in on interface idx.
type arrivalConn struct {
	*fakeConn
	idx int
}

func (c arrivalConn) ArrivalIf() int { return c.idx }

// TestLinkVLANID: the arrival interface's VLAN tag from the environment,
// 0 for an interface in no VLAN; a connection that cannot tell, or whose
// listener did not keep it, is a Tcl error; a rule with the command asks
// its listeners to keep arrivals.
func TestLinkVLANID(t *testing.T) {
	env := &Env{VLANTag: func(i int) (int, bool) { return 100 + i, i < 5 }}
	for _, tc := range []struct {
		c         Conn
		env       *Env
		want, err string
	}{
		{arrivalConn{newFakeConn(), 2}, env, "102", ""},
		{arrivalConn{newFakeConn(), 7}, env, "0", ""},
		{arrivalConn{newFakeConn(), 2}, &Env{}, "0", ""},
		{arrivalConn{newFakeConn(), 0}, env, "", "did not say which interface"},
		{newFakeConn(), env, "", "cannot tell which VLAN"},
	} {
		got, err := evalIn(t, tc.c, tc.env, ClientAccepted, "LINK::vlan_id")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: %q, %v; want error %q", tc.c, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%+v: %q, %v; want %s", tc.c, got, err, tc.want)
		}
	}
	if _, err := evalIn(t, arrivalConn{newFakeConn(), 2}, env, ClientAccepted, "LINK::vlan_id x"); err == nil {
		t.Error("LINK::vlan_id x: no error")
	}
	with := mustCompile(t, "l", "when CLIENT_ACCEPTED { log local0. [LINK::vlan_id] }")
	without := mustCompile(t, "n", "when CLIENT_ACCEPTED { log local0. [IP::client_addr] }")
	if !NewProgram(&Env{}, without, with).ReadsLink() || NewProgram(&Env{}, without).ReadsLink() {
		t.Error("ReadsLink does not follow LINK::vlan_id")
	}
}
