package ftpalg

import (
	"net/netip"
	"testing"
)

// step is one line through a Control: from the client (up) or the
// member, and what the gateway makes of it. For OpenActive and
// OpenPassive, listener is the proxy's listener and then the line sent.
type step struct {
	up       bool
	in       string
	action   Action
	line     string
	addr     string
	listener string
	await    bool
}

// TestControl: the commands and answers of the passive and active
// modes, translated or not, and AUTH with and without allow-ftps.
func TestControl(t *testing.T) {
	std := Options{TranslateExtended: true}
	noX := Options{}
	ftps := Options{TranslateExtended: true, AllowFTPS: true}
	for _, c := range []struct {
		name               string
		opt                Options
		clientV4, memberV4 bool
		steps              []step
	}{
		{"pasv", std, true, true, []step{
			{up: false, in: "220 ready\r\n", action: Forward, line: "220 ready\r\n"},
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
			{in: "227 Entering Passive Mode (127,0,228,11,117,48).\r\n", action: OpenPassive, addr: "127.0.228.11:30000",
				listener: "127.0.228.1:40000", line: "227 Entering Passive Mode (127,0,228,1,156,64).\r\n"},
			{up: true, in: "RETR f\r\n", action: Forward, line: "RETR f\r\n"},
			{in: "150 opening\r\n", action: Forward, line: "150 opening\r\n"},
			{in: "226 done\r\n", action: Forward, line: "226 done\r\n"},
		}},
		{"pasv refused", std, true, true, []step{
			{up: true, in: "pasv\r\n", action: Forward, line: "pasv\r\n"},
			{in: "502 no\r\n", action: Forward, line: "502 no\r\n"},
			{in: "227 (1,2,3,4,5,6)\r\n", action: Forward, line: "227 (1,2,3,4,5,6)\r\n"}, // no longer awaited
		}},
		{"pasv unreadable", std, true, true, []step{
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
			{in: "227 somewhere\r\n", action: Forward, line: lineNoPassive},
		}},
		{"pasv ipv6 virtual", std, false, true, []step{
			{up: true, in: "PASV\r\n", action: Reply, line: linePASVv6},
		}},
		{"pasv ipv6 member", std, true, false, []step{
			{up: true, in: "PASV\r\n", action: Forward, line: "EPSV\r\n"},
			{in: "229 ok (|||6446|)\r\n", action: OpenPassive, addr: "invalid AddrPort",
				listener: "127.0.228.1:40000", line: "227 Entering Passive Mode (127,0,228,1,156,64).\r\n"},
		}},
		{"epsv translated", std, true, true, []step{
			{up: true, in: "EPSV\r\n", action: Forward, line: "PASV\r\n"},
			{in: "227 Entering Passive Mode (127,0,228,11,117,48)\r\n", action: OpenPassive, addr: "127.0.228.11:30000",
				listener: "127.0.228.1:40000", line: "229 Entering Extended Passive Mode (|||40000|)\r\n"},
		}},
		{"epsv kept", noX, true, true, []step{
			{up: true, in: "EPSV 1\r\n", action: Forward, line: "EPSV\r\n"},
			{in: "229 Entering Extended Passive Mode (|||30000|)\r\n", action: OpenPassive, addr: "invalid AddrPort",
				listener: "127.0.228.1:40000", line: "229 Entering Extended Passive Mode (|||40000|)\r\n"},
		}},
		{"epsv ipv6 member", std, true, false, []step{
			{up: true, in: "EPSV\r\n", action: Forward, line: "EPSV\r\n"},
			{in: "229 x (|||30000|)\r\n", action: OpenPassive, addr: "invalid AddrPort",
				listener: "127.0.228.1:40000", line: "229 Entering Extended Passive Mode (|||40000|)\r\n"},
		}},
		{"epsv all translated", std, true, true, []step{
			{up: true, in: "EPSV ALL\r\n", action: Reply, line: lineEPSVAll},
		}},
		{"epsv all kept", noX, true, true, []step{
			{up: true, in: "EPSV ALL\r\n", action: Forward, line: "EPSV ALL\r\n"},
		}},
		{"port", std, true, true, []step{
			{up: true, in: "PORT 127,0,0,1,200,10\r\n", action: OpenActive, addr: "127.0.0.1:51210",
				listener: "127.0.0.1:40000", line: "PORT 127,0,0,1,156,64\r\n"},
			{in: "200 PORT ok\r\n", action: Forward, line: "200 PORT ok\r\n"},
		}},
		{"port refused", std, true, true, []step{
			{up: true, in: "PORT 127,0,0,1,200,10\r\n", action: OpenActive, addr: "127.0.0.1:51210",
				listener: "127.0.0.1:40000", line: "PORT 127,0,0,1,156,64\r\n"},
			{in: "500 no\r\n", action: CancelActive, line: "500 no\r\n"},
		}},
		{"port malformed", std, true, true, []step{
			{up: true, in: "PORT 127,0,0,1\r\n", action: Reply, line: lineSyntax},
		}},
		{"port ipv6 member", std, true, false, []step{
			{up: true, in: "PORT 127,0,0,1,200,10\r\n", action: OpenActive, addr: "127.0.0.1:51210",
				listener: "[::1]:40000", line: "EPRT |2|::1|40000|\r\n"},
		}},
		{"eprt translated", std, true, true, []step{
			{up: true, in: "EPRT |1|127.0.0.1|51210|\r\n", action: OpenActive, addr: "127.0.0.1:51210",
				listener: "127.0.0.1:40000", line: "PORT 127,0,0,1,156,64\r\n"},
		}},
		{"eprt kept", noX, true, true, []step{
			{up: true, in: "EPRT |1|127.0.0.1|51210|\r\n", action: OpenActive, addr: "127.0.0.1:51210",
				listener: "127.0.0.1:40000", line: "EPRT |1|127.0.0.1|40000|\r\n"},
		}},
		{"eprt protocol", std, true, true, []step{
			{up: true, in: "EPRT |3|x|1|\r\n", action: Reply, line: lineEPRTProto},
		}},
		{"auth refused", std, true, true, []step{
			{up: true, in: "AUTH TLS\r\n", action: Reply, line: lineAuthRefused},
			{up: true, in: "USER a\r\n", action: Forward, line: "USER a\r\n"},
		}},
		{"auth allowed", ftps, true, true, []step{
			{up: true, in: "AUTH TLS\r\n", action: Forward, line: "AUTH TLS\r\n", await: true},
			{in: "234 AUTH TLS ok\r\n", action: PassThrough, line: "234 AUTH TLS ok\r\n"},
		}},
		{"auth declined by member", ftps, true, true, []step{
			{up: true, in: "AUTH TLS\r\n", action: Forward, line: "AUTH TLS\r\n", await: true},
			{in: "502 no\r\n", action: Forward, line: "502 no\r\n"},
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
		}},
		{"active off", Options{TranslateExtended: true, NoActive: true}, true, true, []step{
			{up: true, in: "PORT 127,0,0,1,4,1\r\n", action: Reply, line: lineNoActive},
			{up: true, in: "EPRT |1|127.0.0.1|1025|\r\n", action: Reply, line: lineNoActive},
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
		}},
		{"ftps required", Options{TranslateExtended: true, AllowFTPS: true, RequireFTPS: true}, true, true, []step{
			{up: true, in: "USER a\r\n", action: Forward, line: "USER a\r\n"},
			{up: true, in: "PASV\r\n", action: Reply, line: lineTLSFirst},
			{up: true, in: "epsv\r\n", action: Reply, line: lineTLSFirst},
			{up: true, in: "PORT 127,0,0,1,4,1\r\n", action: Reply, line: lineTLSFirst},
			{up: true, in: "AUTH TLS\r\n", action: Forward, line: "AUTH TLS\r\n", await: true},
			{in: "234 AUTH TLS ok\r\n", action: PassThrough, line: "234 AUTH TLS ok\r\n"},
		}},
		{"multi-line answer", std, true, true, []step{
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
			{in: "227-Entering Passive Mode (1,2,3,4,5,6)\r\n", action: Forward, line: "227-Entering Passive Mode (1,2,3,4,5,6)\r\n"},
			{in: "227 here: (127,0,228,11,117,48)\r\n", action: OpenPassive, addr: "127.0.228.11:30000",
				listener: "127.0.228.1:40000", line: "227 Entering Passive Mode (127,0,228,1,156,64).\r\n"},
		}},
		{"multi-line inner code", std, true, true, []step{
			{in: "230-Welcome\r\n", action: Forward, line: "230-Welcome\r\n"},
			{in: "234 not the end\r\n", action: Forward, line: "234 not the end\r\n"},
			{in: "230-still\r\n", action: Forward, line: "230-still\r\n"},
			{in: "230 end\r\n", action: Forward, line: "230 end\r\n"},
			{up: true, in: "PASV\r\n", action: Forward, line: "PASV\r\n"},
			{in: "227 (127,0,228,11,117,48)\r\n", action: OpenPassive, addr: "127.0.228.11:30000",
				listener: "127.0.228.1:40000", line: "227 Entering Passive Mode (127,0,228,1,156,64).\r\n"},
		}},
	} {
		ctl := NewControl(c.opt, c.clientV4, c.memberV4)
		for i, s := range c.steps {
			var d Decision
			if s.up {
				d = ctl.FromClient(s.in)
			} else {
				d = ctl.FromMember(s.in)
			}
			line := d.Line
			switch d.Action {
			case OpenActive:
				line = ctl.ActiveCommand(netip.MustParseAddrPort(s.listener))
			case OpenPassive:
				line = ctl.PassiveAnswer(netip.MustParseAddrPort(s.listener))
			}
			if d.Action != s.action || line != s.line || d.Await != s.await {
				t.Errorf("%s step %d %q: action %d line %q await %v; want %d %q %v", c.name, i, s.in, d.Action, line, d.Await, s.action, s.line, s.await)
			}
			if s.addr != "" && d.Addr.String() != s.addr {
				t.Errorf("%s step %d: address %v, want %s", c.name, i, d.Addr, s.addr)
			}
		}
	}
}
