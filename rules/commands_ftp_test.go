package rules

import (
	"errors"
	"strings"
	"testing"
)

// ftpConn has the FTP gateway's settings (started: they can no longer
// change).
type ftpConn struct {
	*fakeConn
	st      *FTPSettings
	started bool
}

func (c *ftpConn) FTP() (*FTPSettings, error) {
	if c.started {
		return nil, errors.New("the FTP gateway has started")
	}
	return c.st, nil
}

// TestFTPCommands: each FTP:: command reads or changes the connection's
// settings; bad words, bad ports, a virtual without the gateway and a
// gateway already started are Tcl errors that change nothing.
func TestFTPCommands(t *testing.T) {
	fresh := func() FTPSettings { return FTPSettings{Enabled: true, AllowActive: true, FTPSMode: "allow"} }
	for _, tc := range []struct {
		script, want string
		st           FTPSettings // after
		err          string
	}{
		{"FTP::disable", "", FTPSettings{AllowActive: true, FTPSMode: "allow"}, ""},
		{"FTP::disable; FTP::enable", "", fresh(), ""},
		{"FTP::port 5000 5999", "", FTPSettings{Enabled: true, AllowActive: true, FTPSMode: "allow", PortFirst: 5000, PortLast: 5999}, ""},
		{"FTP::port 6000", "", FTPSettings{Enabled: true, AllowActive: true, FTPSMode: "allow", PortFirst: 6000, PortLast: 6000}, ""},
		{"FTP::allow_active_mode", "enable", fresh(), ""},
		{"FTP::allow_active_mode disable; FTP::allow_active_mode", "disable", FTPSettings{Enabled: true, FTPSMode: "allow"}, ""},
		{"FTP::ftps_mode", "allow", fresh(), ""},
		{"FTP::ftps_mode require; FTP::ftps_mode", "require", FTPSettings{Enabled: true, AllowActive: true, FTPSMode: "require"}, ""},
		{"FTP::port 5999 5000", "", fresh(), "ends before it starts"},
		{"FTP::port 0", "", fresh(), "bad port"},
		{"FTP::port 70000", "", fresh(), "bad port"},
		{"FTP::port x", "", fresh(), "bad port"},
		{"FTP::port", "", fresh(), "wrong # args"},
		{"FTP::allow_active_mode on", "", fresh(), "want enable or disable"},
		{"FTP::ftps_mode implicit", "", fresh(), "want disallow, allow or require"},
		{"FTP::enable now", "", fresh(), "wrong # args"},
	} {
		c := &ftpConn{fakeConn: newFakeConn(), st: &FTPSettings{}}
		*c.st = fresh()
		got, err := evalIn(t, c, nil, ClientAccepted, "eval {"+tc.script+"}")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %q, %v; want error %q", tc.script, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.script, got, err, tc.want)
		}
		if *c.st != tc.st {
			t.Errorf("%s: settings %+v, want %+v", tc.script, *c.st, tc.st)
		}
	}
	started := &ftpConn{fakeConn: newFakeConn(), st: &FTPSettings{}, started: true}
	if _, err := evalIn(t, started, nil, ClientClosed, "FTP::disable"); err == nil || !strings.Contains(err.Error(), "has started") {
		t.Errorf("after the start: %v", err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "FTP::ftps_mode"); err == nil || !strings.Contains(err.Error(), "does not run the FTP gateway") {
		t.Errorf("without the gateway: %v", err)
	}
	r, _ := Compile("f", "when CLIENT_ACCEPTED { FTP::port 5000 5999 }\nwhen SERVER_CONNECTED { FTP::enforce_tls_session_reuse enable }")
	if r == nil || len(r.Unsupported()) != 1 || !strings.Contains(r.Unsupported()[0], "FTP::enforce_tls_session_reuse") {
		t.Errorf("rule %v, want FTP::enforce_tls_session_reuse unsupported", r)
	}
}
