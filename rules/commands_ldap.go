package rules

import "github.com/openltm/openltm/rules/tcl"

// ServerLDAPConn is implemented by a Conn whose virtual has a server-ldap
// profile, found by type assertion: the settings of the StartTLS the
// virtual sends the member.
type ServerLDAPConn interface {
	// ServerLDAP is the connection's server-ldap settings to read or
	// change, or an error when there are none to change (no profile, or
	// the member's StartTLS was sent).
	ServerLDAP() (*STARTTLSSettings, error)
}

// registerLDAP adds LDAP::activation_mode, LDAP::enable and
// LDAP::disable. They change the client-ldap profile (the StartTLS the
// virtual answers) or the server-ldap profile (the StartTLS it sends the
// member) for one connection: on a virtual with one of the two, that one;
// with both, the rule's side (clientside in CLIENT_ACCEPTED and
// LB_SELECTED, serverside in SERVER_CONNECTED, or a clientside or
// serverside block) [M].
func registerLDAP(t *tcl.Commands) {
	t.Register("LDAP::enable", ldapSwitch("LDAP::enable", true))
	t.Register("LDAP::disable", ldapSwitch("LDAP::disable", false))
	t.Register("LDAP::activation_mode", ldapMode)
}

// ldapSettings is the running connection's client-ldap or server-ldap
// settings, as registerLDAP chooses.
func ldapSettings(in *tcl.Interp, cmd string) (*STARTTLSSettings, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	var client, server *STARTTLSSettings
	var cerr, serr error
	hasClient, hasServer := false, false
	if sc, ok := c.(STARTTLSConn); ok {
		client, cerr = sc.STARTTLS()
		hasClient = client != nil && client.Protocol == "LDAP"
		if client != nil && !hasClient {
			cerr = nil
		} else if cerr != nil {
			hasClient = isStarted(cerr)
		}
	}
	if sc, ok := c.(ServerLDAPConn); ok {
		server, serr = sc.ServerLDAP()
		hasServer = server != nil || isStarted(serr)
	}
	side := s.side
	switch {
	case hasClient && hasServer:
	case hasClient:
		side = ClientSide
	case hasServer:
		side = ServerSide
	default:
		return nil, tcl.Errorf("%s: the virtual server has no client-ldap or server-ldap profile", cmd)
	}
	if side == ServerSide {
		if serr != nil {
			return nil, tcl.Errorf("%s: %v", cmd, serr)
		}
		return server, nil
	}
	if cerr != nil {
		return nil, tcl.Errorf("%s: %v", cmd, cerr)
	}
	return client, nil
}

// startedErr marks the error of settings asked for too late (the profile
// is there, its StartTLS has started).
type startedErr interface{ Started() bool }

// isStarted reports whether err says the profile is there but its
// settings can no longer change.
func isStarted(err error) bool {
	se, ok := err.(startedErr)
	return ok && se.Started()
}

// ldapSwitch is LDAP::enable and LDAP::disable: StartTLS on or off for
// this connection (off: the client's StartTLS passes to the member, and
// no StartTLS is sent to the member, whose side stays plaintext).
func ldapSwitch(cmd string, on bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		st, err := ldapSettings(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		st.Enabled = on
		return tcl.Empty, nil
	}
}

// ldapMode is LDAP::activation_mode ?none|allow|require?: without a
// word, the connection's mode (the profile's until a rule set one); with
// one, the mode for this connection.
func ldapMode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "LDAP::activation_mode"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?none|allow|require?")
	}
	mode := ""
	if len(args) == 2 {
		switch mode = args[1].String(); mode {
		case "none", "allow", "require":
		default:
			return tcl.Empty, tcl.Errorf("%s: bad mode %q: want none, allow or require", cmd, mode)
		}
	}
	st, err := ldapSettings(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if mode == "" {
		return tcl.Str(st.Mode), nil
	}
	st.Mode = mode
	return tcl.Empty, nil
}
