package rstcause

import (
	"net/netip"
	"testing"
)

func TestLine(t *testing.T) {
	cases := []struct {
		area     string
		from, to string
		c        Cause
		want     string
	}{
		{"l4", "10.1.1.10:80", "10.2.2.2:51234", NoServer,
			"01230140:6: RST sent from 10.1.1.10:80 to 10.2.2.2:51234, [l4:lb] No server selected"},
		{"mblb", "10.1.1.10:80", "10.2.2.2:51234", HeaderTooLarge,
			"01230140:6: RST sent from 10.1.1.10:80 to 10.2.2.2:51234, [mblb:http] HTTP header exceeded maximum allowed size"},
		{"l4", "[2001:db8::1]:443", "[2001:db8::2]:40000", IdleTimeout,
			"01230140:6: RST sent from 2001:db8::1.443 to 2001:db8::2.40000, [l4:idle] Idle timeout (clientside)"},
		{"l4", "[::ffff:10.0.0.1]:80", "[::ffff:10.0.0.2]:1", RuleReject,
			"01230140:6: RST sent from 10.0.0.1:80 to 10.0.0.2:1, [l4:rule] iRule execution (reject)"},
		{"l4", "10.0.0.1:80", "10.0.0.2:1", PeerReset | Peer,
			"01230140:6: RST sent from 10.0.0.1:80 to 10.0.0.2:1, [l4:peer-rst] {peer} TCP RST from remote system"},
		{"l4", "10.0.0.1:80", "10.0.0.2:1", TCLError,
			"01230140:6: RST sent from 10.0.0.1:80 to 10.0.0.2:1, [l4:tcl] TCL error"},
		{"mblb", "10.0.0.1:80", "10.0.0.2:1", ServerFailed | Peer,
			"01230140:6: RST sent from 10.0.0.1:80 to 10.0.0.2:1, [mblb:server] {peer} Server connection failed"},
		{"l4", "10.0.0.1:80", "10.0.0.2:1", numCauses + 3,
			"01230140:6: RST sent from 10.0.0.1:80 to 10.0.0.2:1, [l4:none] Unknown reason"},
	}
	for _, tc := range cases {
		if got := Line(tc.area, netip.MustParseAddrPort(tc.from), netip.MustParseAddrPort(tc.to), tc.c); got != tc.want {
			t.Errorf("Line(%v):\n got %q\nwant %q", tc.c, got, tc.want)
		}
	}
	for c := Cause(0); c < numCauses; c++ {
		if c.Tag() == "" || c.String() == "" {
			t.Errorf("cause %d has no tag or words", c)
		}
	}
}

// TestLogOnOff: lines reach the sink only while it is set; off, a
// report allocates nothing, and a nil Log takes reports too.
func TestLogOnOff(t *testing.T) {
	var l Log
	var got []string
	from, to := netip.MustParseAddrPort("127.27.0.10:80"), netip.MustParseAddrPort("127.27.0.1:5000")
	l.Reset("l4", from, to, NoServer)
	if n := testing.AllocsPerRun(100, func() { l.Reset("l4", from, to, NoServer) }); n != 0 {
		t.Fatalf("a report with the log off allocates %v", n)
	}
	l.Set(func(s string) { got = append(got, s) })
	if !l.On() {
		t.Fatal("not on once set")
	}
	l.Reset("l4", from, to, ConnLimit)
	l.Set(nil)
	l.Reset("l4", from, to, ConnLimit)
	if len(got) != 1 || got[0] != "01230140:6: RST sent from 127.27.0.10:80 to 127.27.0.1:5000, [l4:limit] Connection limit reached" {
		t.Fatalf("lines: %q", got)
	}
	var nl *Log
	nl.Reset("l4", from, to, NoServer)
	if nl.On() {
		t.Fatal("a nil Log is on")
	}
}
