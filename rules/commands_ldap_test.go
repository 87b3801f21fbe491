package rules

import (
	"errors"
	"strings"
	"testing"
)

// ldapConn has client-ldap settings (client, nil: no profile) and
// server-ldap settings (server, nil: none).
type ldapConn struct {
	*fakeConn
	client, server *STARTTLSSettings
}

func (c *ldapConn) STARTTLS() (*STARTTLSSettings, error) {
	if c.client == nil {
		return nil, errors.New("the virtual server has no smtps, imap, pop3 or client-ldap profile")
	}
	return c.client, nil
}

func (c *ldapConn) ServerLDAP() (*STARTTLSSettings, error) {
	if c.server == nil {
		return nil, errors.New("the virtual server has no server-ldap profile")
	}
	return c.server, nil
}

// TestLDAPCommands: LDAP:: commands change client-ldap's settings or
// server-ldap's: the only profile there is, or the rule's side when
// there are both; bad modes and a virtual without either are Tcl errors
// that change nothing.
func TestLDAPCommands(t *testing.T) {
	fresh := func() STARTTLSSettings { return STARTTLSSettings{Protocol: "LDAP", Enabled: true, Mode: "allow"} }
	off := fresh()
	off.Enabled = false
	req := fresh()
	req.Mode = "require"
	for _, tc := range []struct {
		name           string
		client, server bool
		ev             Event
		script, want   string
		wc, ws         STARTTLSSettings // after
		err            string
	}{
		{"client only", true, false, ClientAccepted, "LDAP::activation_mode require; LDAP::activation_mode", "require", req, STARTTLSSettings{}, ""},
		{"server only, in CLIENT_ACCEPTED", false, true, ClientAccepted, "LDAP::disable", "", STARTTLSSettings{}, off, ""},
		{"both, clientside", true, true, ClientAccepted, "LDAP::disable", "", off, fresh(), ""},
		{"both, serverside", true, true, ServerConnected, "LDAP::activation_mode require", "", fresh(), req, ""},
		{"both, a serverside block", true, true, ClientAccepted, "serverside { LDAP::disable }", "", fresh(), off, ""},
		{"enable", true, false, ClientAccepted, "LDAP::disable; LDAP::enable", "", fresh(), STARTTLSSettings{}, ""},
		{"bad mode", true, false, ClientAccepted, "LDAP::activation_mode sometimes", "", fresh(), STARTTLSSettings{}, "want none, allow or require"},
		{"extra word", true, false, ClientAccepted, "LDAP::enable now", "", fresh(), STARTTLSSettings{}, "wrong # args"},
		{"no profile", false, false, ClientAccepted, "LDAP::disable", "", STARTTLSSettings{}, STARTTLSSettings{}, "has no client-ldap or server-ldap profile"},
	} {
		c := &ldapConn{fakeConn: newFakeConn()}
		if tc.client {
			st := fresh()
			c.client = &st
		}
		if tc.server {
			st := fresh()
			c.server = &st
		}
		got, err := evalIn(t, c, nil, tc.ev, "eval {"+tc.script+"}")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %q, %v; want error %q", tc.name, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if c.client != nil && *c.client != tc.wc {
			t.Errorf("%s: client-ldap %+v, want %+v", tc.name, *c.client, tc.wc)
		}
		if c.server != nil && *c.server != tc.ws {
			t.Errorf("%s: server-ldap %+v, want %+v", tc.name, *c.server, tc.ws)
		}
	}
	smtps := &mailConn{fakeConn: newFakeConn(), st: &STARTTLSSettings{Protocol: "SMTPS", Enabled: true, Mode: "allow"}}
	if _, err := evalIn(t, smtps, nil, ClientAccepted, "LDAP::disable"); err == nil || !strings.Contains(err.Error(), "has no client-ldap or server-ldap profile") || !smtps.st.Enabled {
		t.Errorf("on an smtps virtual: %v", err)
	}
}
