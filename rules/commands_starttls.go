package rules

import "github.com/openltm/openltm/rules/tcl"

// STARTTLSSettings are one connection's STARTTLS offload settings (an
// smtps, imap or pop3 profile), which SMTPS::, IMAP:: and POP3:: commands
// change before the conversation starts (CLIENT_ACCEPTED, LB_SELECTED,
// SERVER_CONNECTED): a rule requires TLS from outside networks only, or
// turns the offload off for a legacy client, on one virtual.
type STARTTLSSettings struct {
	// Protocol is the profile's namespace: SMTPS, IMAP or POP3.
	Protocol string
	// Enabled: the offload reads the conversation (enable, disable);
	// off, it passes untouched and in plaintext.
	Enabled bool
	// Mode is none, allow or require (activation_mode).
	Mode string
}

// STARTTLSConn is implemented by a Conn whose virtual offloads STARTTLS,
// found by type assertion.
type STARTTLSConn interface {
	// STARTTLS is the connection's settings to read or change, or an
	// error when there are none to change (no profile, or the
	// conversation has started).
	STARTTLS() (*STARTTLSSettings, error)
}

// registerSTARTTLS adds the SMTPS::, IMAP:: and POP3:: commands; each
// namespace answers on a virtual with its own profile only.
func registerSTARTTLS(t *tcl.Commands) {
	for _, ns := range []string{"SMTPS", "IMAP", "POP3"} {
		t.Register(ns+"::enable", starttlsSwitch(ns, "enable", true))
		t.Register(ns+"::disable", starttlsSwitch(ns, "disable", false))
		t.Register(ns+"::activation_mode", starttlsMode(ns))
	}
}

// starttlsSettings is the running connection's settings, for namespace
// ns.
func starttlsSettings(in *tcl.Interp, ns, cmd string) (*STARTTLSSettings, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(STARTTLSConn)
	if !ok {
		return nil, tcl.Errorf("%s: the virtual server has no %s profile", cmd, profileOf(ns))
	}
	st, err := sc.STARTTLS()
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	if st.Protocol != ns {
		return nil, tcl.Errorf("%s: the virtual server has no %s profile", cmd, profileOf(ns))
	}
	return st, nil
}

// profileOf is the profile kind behind an iRule namespace.
func profileOf(ns string) string {
	switch ns {
	case "IMAP":
		return "imap"
	case "POP3":
		return "pop3"
	}
	return "smtps"
}

// starttlsSwitch is NS::enable and NS::disable: the offload on or off
// for this connection (off: the conversation passes as written, in
// plaintext, STARTTLS included).
func starttlsSwitch(ns, word string, on bool) tcl.CmdFunc {
	cmd := ns + "::" + word
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		st, err := starttlsSettings(in, ns, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		st.Enabled = on
		return tcl.Empty, nil
	}
}

// starttlsMode is NS::activation_mode ?none|allow|require?: without a
// word, the connection's mode (the profile's activation-mode until a
// rule set one); with one, the mode for this connection.
func starttlsMode(ns string) tcl.CmdFunc {
	cmd := ns + "::activation_mode"
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
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
		st, err := starttlsSettings(in, ns, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		if mode == "" {
			return tcl.Str(st.Mode), nil
		}
		st.Mode = mode
		return tcl.Empty, nil
	}
}
