package rules

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestF5OnlyCommands: a rule naming an F5 command openltm has nothing
// behind is kept with a warning that gives the reason; the command, run
// from a script that builds the call, is a Tcl error naming it and why.
func TestF5OnlyCommands(t *testing.T) {
	for _, tc := range []struct{ cmd, why string }{
		{"LB::bias 10", "no per-connection bias"},
		{"LB::command pem", "F5 modules"},
		{"LB::context_id", "context"},
		{"LB::dst_tag t1", "no tags"},
		{"LB::src_tag t1", "no tags"},
		{"LINK::qos", "802.1p"},
		{"DNS::rrname", "resolver and cache"},
		{"DNS::rrtype", "resolver and cache"},
	} {
		name := strings.Fields(tc.cmd)[0]
		r, err := Compile("r", "when CLIENT_ACCEPTED { "+tc.cmd+" }")
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil || len(r.Unsupported()) != 1 || !strings.HasPrefix(r.Unsupported()[0], name+" (") || !strings.Contains(r.Unsupported()[0], tc.why) {
			t.Errorf("%s: %v; want it kept with a warning giving %q", tc.cmd, err, tc.why)
		}
		_, err = evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "eval [list "+tc.cmd+"]")
		if err == nil || !strings.Contains(err.Error(), name+": not supported") || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s at run time: %v; want a Tcl error with %q", tc.cmd, err, tc.why)
		}
	}
}

// TestLinkHops: on loopback connections LINK::lasthop and LINK::nexthop
// are the loopback interface's all-zero address, type LOOPBACK, name
// its own; nexthop on the client side before the server connection is
// the broadcast address F5 documents; a bad option is refused; a rule
// with either asks its listeners to keep arrivals.
func TestLinkHops(t *testing.T) {
	noServer := newFakeConn()
	noServer.addrs[EndServerLocal] = netip.AddrPort{}
	for _, tc := range []struct {
		c         Conn
		ev        Event
		cmd, want string
	}{
		{newFakeConn(), ClientAccepted, "LINK::lasthop", "00:00:00:00:00:00"},
		{newFakeConn(), ClientAccepted, "LINK::lasthop type", "LOOPBACK"},
		{newFakeConn(), ClientAccepted, "LINK::lasthop id", "00:00:00:00:00:00"},
		{newFakeConn(), ServerConnected, "LINK::nexthop", "00:00:00:00:00:00"},
		{newFakeConn(), ServerConnected, "LINK::lasthop type", "LOOPBACK"},
		{newFakeConn(), HTTPRequest, "LINK::nexthop type", "LOOPBACK"},
		{noServer, ClientAccepted, "LINK::nexthop", "ff:ff:ff:ff:ff:ff"},
		{noServer, ClientAccepted, "LINK::nexthop type", "UNKNOWN"},
		{noServer, ClientAccepted, "LINK::nexthop name", ""},
	} {
		got, err := evalIn(t, tc.c, &Env{}, tc.ev, tc.cmd)
		if err != nil || got != tc.want {
			t.Errorf("%s in %s: %q, %v; want %q", tc.cmd, tc.ev, got, err, tc.want)
		}
	}
	if got, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "LINK::lasthop name"); err != nil || got == "" {
		t.Errorf("LINK::lasthop name: %q, %v", got, err)
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "LINK::nexthop mac"); err == nil {
		t.Error("LINK::nexthop mac: no error")
	}
	if !NewProgram(&Env{}, mustCompile(t, "l", "when CLIENT_ACCEPTED { log local0. [LINK::lasthop] }")).ReadsLink() {
		t.Error("ReadsLink does not follow LINK::lasthop")
	}
}

// TestNeighbourTables: the gateway of the most specific route wins,
// read from /proc/net/route's words.
func TestNeighbourTables(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want uint32
		ok   bool
	}{
		{"010200C0", 0x010200C0, true},
		{"00000000", 0, true},
		{"zz", 0, false},
	} {
		got, ok := hexLE(tc.s)
		if got != tc.want || ok != tc.ok {
			t.Errorf("hexLE(%q) = %x %v", tc.s, got, ok)
		}
	}
	if _, err := neighbourMAC("lo", netip.MustParseAddr("::1")); err == nil {
		t.Error("IPv6 neighbour: no error")
	}
}
