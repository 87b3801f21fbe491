package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// FTPSettings are one FTP control connection's gateway settings, which
// FTP:: commands change before the gateway starts (CLIENT_ACCEPTED,
// LB_SELECTED, SERVER_CONNECTED): a rule opens active mode to some
// clients only, pins passive ports to a firewall's range, or requires
// FTPS from outside networks, on one virtual.
type FTPSettings struct {
	// Enabled: the gateway reads the control connection (FTP::enable,
	// FTP::disable); off, it passes untouched.
	Enabled bool
	// PortFirst and PortLast bound the passive data ports (FTP::port);
	// 0: any.
	PortFirst, PortLast uint16
	// AllowActive lets PORT and EPRT through (FTP::allow_active_mode).
	AllowActive bool
	// FTPSMode is disallow, allow or require (FTP::ftps_mode).
	FTPSMode string
}

// FTPConn is implemented by a Conn whose virtual runs the FTP gateway
// (an ftp profile), found by type assertion.
type FTPConn interface {
	// FTP is the connection's settings to read or change, or an error
	// when there are none to change (no gateway, or it has started).
	FTP() (*FTPSettings, error)
}

// registerFTP adds the FTP:: commands that change the gateway's
// settings. FTP::enforce_tls_session_reuse stays unimplemented: openltm
// does not terminate FTPS (after AUTH TLS the control connection passes
// untouched), so it cannot check the data connections' TLS sessions.
func registerFTP(t *tcl.Commands) {
	t.Register("FTP::enable", ftpSwitch("FTP::enable", true))
	t.Register("FTP::disable", ftpSwitch("FTP::disable", false))
	t.Register("FTP::port", cmdFTPPort)
	t.Register("FTP::allow_active_mode", cmdFTPActive)
	t.Register("FTP::ftps_mode", cmdFTPSMode)
}

// ftpSettings is the running connection's FTP settings.
func ftpSettings(in *tcl.Interp, cmd string) (*FTPSettings, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	fc, ok := c.(FTPConn)
	if !ok {
		return nil, tcl.Errorf("%s: the virtual server does not run the FTP gateway (no ftp profile)", cmd)
	}
	st, err := fc.FTP()
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	return st, nil
}

// ftpSwitch is FTP::enable and FTP::disable: the gateway on or off for
// this connection (off: commands and answers pass as written, as on a
// virtual without the profile).
func ftpSwitch(cmd string, on bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		st, err := ftpSettings(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		st.Enabled = on
		return tcl.Empty, nil
	}
}

// cmdFTPPort is FTP::port FIRST ?LAST?: the passive data listeners the
// client is told of take ports from FIRST to LAST (FIRST alone: that
// port), for a firewall opened to that range; a port in use is skipped,
// and with none free the client's PASV or EPSV is answered 425.
func cmdFTPPort(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("FTP::port first ?last?")
	}
	port := func(v tcl.Value) (uint16, error) {
		n, err := strconv.Atoi(v.String())
		if err != nil || n < 1 || n > 65535 {
			return 0, tcl.Errorf("FTP::port: bad port %q: want 1 to 65535", v.String())
		}
		return uint16(n), nil
	}
	first, err := port(args[1])
	if err != nil {
		return tcl.Empty, err
	}
	last := first
	if len(args) == 3 {
		if last, err = port(args[2]); err != nil {
			return tcl.Empty, err
		}
		if last < first {
			return tcl.Empty, tcl.Errorf("FTP::port: the range %d-%d ends before it starts", first, last)
		}
	}
	st, err := ftpSettings(in, "FTP::port")
	if err != nil {
		return tcl.Empty, err
	}
	st.PortFirst, st.PortLast = first, last
	return tcl.Empty, nil
}

// cmdFTPActive is FTP::allow_active_mode ?enable|disable?: without a
// word, the current state (enable or disable [M]); disabled, the
// client's PORT and EPRT are answered 502 and only passive transfers
// run.
func cmdFTPActive(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("FTP::allow_active_mode ?enable|disable?")
	}
	on := false
	if len(args) == 2 {
		switch args[1].String() {
		case "enable":
			on = true
		case "disable":
		default:
			return tcl.Empty, tcl.Errorf("FTP::allow_active_mode: bad mode %q: want enable or disable", args[1].String())
		}
	}
	st, err := ftpSettings(in, "FTP::allow_active_mode")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		st.AllowActive = on
		return tcl.Empty, nil
	}
	if st.AllowActive {
		return tcl.Str("enable"), nil
	}
	return tcl.Str("disable"), nil
}

// cmdFTPSMode is FTP::ftps_mode ?disallow|allow|require?: without a
// word, the current mode (from the profile's allow-ftps: allow or
// disallow). disallow answers AUTH 534; allow lets it through to the
// member, after which the control connection passes untouched; require
// also answers the data commands (PASV, EPSV, PORT, EPRT) 534 until
// AUTH succeeded, so nothing is transferred in the clear.
func cmdFTPSMode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("FTP::ftps_mode ?disallow|allow|require?")
	}
	mode := ""
	if len(args) == 2 {
		switch mode = args[1].String(); mode {
		case "disallow", "allow", "require":
		default:
			return tcl.Empty, tcl.Errorf("FTP::ftps_mode: bad mode %q: want disallow, allow or require", mode)
		}
	}
	st, err := ftpSettings(in, "FTP::ftps_mode")
	if err != nil {
		return tcl.Empty, err
	}
	if mode == "" {
		return tcl.Str(st.FTPSMode), nil
	}
	st.FTPSMode = mode
	return tcl.Empty, nil
}
