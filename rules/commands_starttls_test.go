package rules

import (
	"errors"
	"strings"
	"testing"
)

// mailConn has a STARTTLS offload's settings (started: they can no
// longer change).
type mailConn struct {
	*fakeConn
	st      *STARTTLSSettings
	started bool
}

func (c *mailConn) STARTTLS() (*STARTTLSSettings, error) {
	if c.started {
		return nil, errors.New("the conversation has started")
	}
	return c.st, nil
}

// TestSTARTTLSCommands: the SMTPS::, IMAP:: and POP3:: commands read or
// change the connection's settings on a virtual with their own profile;
// bad modes, another namespace's profile, a virtual without one and a
// conversation already started are Tcl errors that change nothing.
func TestSTARTTLSCommands(t *testing.T) {
	fresh := func(p string) STARTTLSSettings { return STARTTLSSettings{Protocol: p, Enabled: true, Mode: "allow"} }
	for _, tc := range []struct {
		proto, script, want string
		st                  STARTTLSSettings // after
		err                 string
	}{
		{"SMTPS", "SMTPS::activation_mode", "allow", fresh("SMTPS"), ""},
		{"SMTPS", "SMTPS::activation_mode require; SMTPS::activation_mode", "require", STARTTLSSettings{Protocol: "SMTPS", Enabled: true, Mode: "require"}, ""},
		{"IMAP", "IMAP::activation_mode none", "", STARTTLSSettings{Protocol: "IMAP", Enabled: true, Mode: "none"}, ""},
		{"POP3", "POP3::disable", "", STARTTLSSettings{Protocol: "POP3", Mode: "allow"}, ""},
		{"POP3", "POP3::disable; POP3::enable", "", fresh("POP3"), ""},
		{"SMTPS", "SMTPS::activation_mode disallow", "", fresh("SMTPS"), "want none, allow or require"},
		{"SMTPS", "SMTPS::activation_mode allow now", "", fresh("SMTPS"), "wrong # args"},
		{"SMTPS", "SMTPS::enable now", "", fresh("SMTPS"), "wrong # args"},
		{"SMTPS", "IMAP::activation_mode require", "", fresh("SMTPS"), "has no imap profile"},
		{"IMAP", "POP3::disable", "", fresh("IMAP"), "has no pop3 profile"},
	} {
		c := &mailConn{fakeConn: newFakeConn(), st: &STARTTLSSettings{}}
		*c.st = fresh(tc.proto)
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
	started := &mailConn{fakeConn: newFakeConn(), st: &STARTTLSSettings{Protocol: "SMTPS"}, started: true}
	if _, err := evalIn(t, started, nil, ClientClosed, "SMTPS::disable"); err == nil || !strings.Contains(err.Error(), "has started") {
		t.Errorf("after the start: %v", err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "SMTPS::activation_mode"); err == nil || !strings.Contains(err.Error(), "has no smtps profile") {
		t.Errorf("without the profile: %v", err)
	}
}
