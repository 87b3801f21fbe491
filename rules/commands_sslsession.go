package rules

import (
	"encoding/hex"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// SSLSessionConn is implemented by a Conn whose TLS sessions and
// handshakes a rule may act on, as BIG-IP's SSL::session,
// SSL::sessionticket, SSL::handshake, SSL::unclean_shutdown and
// SSL::is_renegotiation_secure do; a Conn without it makes those
// commands Tcl errors.
type SSLSessionConn interface {
	// SSLSessionInvalidate keeps the side's session from being resumed
	// again; an error when the side does not speak TLS.
	SSLSessionInvalidate(s Side) error
	// SSLSessionTicket is the session ticket the side's handshake issued
	// or resumed with, nil when there was none.
	SSLSessionTicket(s Side) ([]byte, error)
	// SSLHandshakeHold holds (hold) or resumes the client's handshake: a
	// hold is asked in CLIENTSSL_CLIENTHELLO, and the handshake waits,
	// within the profile's handshake-timeout, until a later script (an
	// `after`, a sideband answer) resumes it.
	SSLHandshakeHold(s Side, hold bool) error
	// SSLUncleanShutdown makes the side's close go without close_notify
	// (on) or with it (off, the default).
	SSLUncleanShutdown(s Side, on bool) error
	// SSLRenegotiationSecure reports whether the side's peer offered
	// secure renegotiation (RFC 5746) in its hello.
	SSLRenegotiationSecure(s Side) (bool, error)
	// SSLDynamicRecords is the client side's allow-dynamic-record-sizing
	// for this connection; with set it becomes on first, before the
	// handshake's configuration is fixed (CLIENT_ACCEPTED,
	// CLIENTSSL_CLIENTHELLO), else an error.
	SSLDynamicRecords(set, on bool) (bool, error)
}

func registerSSLSession(t *tcl.Commands) {
	// SSL::session invalidate: the connection's session is not resumed
	// again; a client offering its ticket gets a full handshake.
	t.Register("SSL::session", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 || args[1].String() != "invalidate" {
			return tcl.Empty, tcl.WrongArgs("SSL::session invalidate")
		}
		s, c, err := sslSession(in, "SSL::session")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.SSLSessionInvalidate(s.side))
	})
	// SSL::sessionticket: the session ticket in hex, empty when the
	// handshake used none.
	t.Register("SSL::sessionticket", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("SSL::sessionticket")
		}
		s, c, err := sslSession(in, "SSL::sessionticket")
		if err != nil {
			return tcl.Empty, err
		}
		b, err := c.SSLSessionTicket(s.side)
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Str(hex.EncodeToString(b)), nil
	})
	t.Register("SSL::handshake", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 || (args[1].String() != "hold" && args[1].String() != "resume") {
			return tcl.Empty, tcl.WrongArgs("SSL::handshake hold|resume")
		}
		s, c, err := sslSession(in, "SSL::handshake")
		if err != nil {
			return tcl.Empty, err
		}
		hold := args[1].String() == "hold"
		if hold && s.event != ClientSSLClientHello {
			// [M] crypto/tls waits for the rule only where it asks which
			// configuration to use: the client's hello.
			return tcl.Empty, tcl.Errorf("SSL::handshake hold: the handshake can be held only in CLIENTSSL_CLIENTHELLO")
		}
		return tcl.Empty, tclErr(c.SSLHandshakeHold(s.side, hold))
	})
	t.Register("SSL::unclean_shutdown", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 || (args[1].String() != "enable" && args[1].String() != "disable") {
			return tcl.Empty, tcl.WrongArgs("SSL::unclean_shutdown enable|disable")
		}
		s, c, err := sslSession(in, "SSL::unclean_shutdown")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.SSLUncleanShutdown(s.side, args[1].String() == "enable"))
	})
	t.Register("SSL::is_renegotiation_secure", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("SSL::is_renegotiation_secure")
		}
		s, c, err := sslSession(in, "SSL::is_renegotiation_secure")
		if err != nil {
			return tcl.Empty, err
		}
		ok, err := c.SSLRenegotiationSecure(s.side)
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Bool(ok), nil
	})
	// SSL::allow_dynamic_record_sizing ?0|1?: the client-ssl profile's
	// allow-dynamic-record-sizing for this connection [M: BIG-IP's
	// syntax unverified; enable and disable are taken too, as the
	// profile spells the values].
	t.Register("SSL::allow_dynamic_record_sizing", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		set, on := false, false
		switch {
		case len(args) == 1:
		case len(args) == 2 && (args[1].String() == "0" || args[1].String() == "disable"):
			set = true
		case len(args) == 2 && (args[1].String() == "1" || args[1].String() == "enable"):
			set, on = true, true
		default:
			return tcl.Empty, tcl.WrongArgs("SSL::allow_dynamic_record_sizing ?0|1?")
		}
		s, c, err := sslSession(in, "SSL::allow_dynamic_record_sizing")
		if err != nil {
			return tcl.Empty, err
		}
		if s.side != ClientSide {
			return tcl.Empty, tcl.Errorf("SSL::allow_dynamic_record_sizing: only the client side's records are sized dynamically (allow-dynamic-record-sizing is a client-ssl setting)")
		}
		v, err := c.SSLDynamicRecords(set, on)
		if err != nil || set {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Bool(v), nil
	})
}

// sizesRecords reports whether a rule's text names
// SSL::allow_dynamic_record_sizing (Program.SizesRecords).
func sizesRecords(body string) bool {
	return strings.Contains(body, "SSL::allow_dynamic_record_sizing")
}

// sslSession is the running event's session and connection for the
// SSL::session family, an error where the virtual does not offer them.
func sslSession(in *tcl.Interp, cmd string) (*ConnState, SSLSessionConn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	sc, ok := c.(SSLSessionConn)
	if !ok {
		return nil, nil, tcl.Errorf("%s: this virtual server's TLS sessions are not handed to rules (a standard virtual server with a client-ssl or server-ssl profile's are)", cmd)
	}
	return s, sc, nil
}

// controlsSessions reports whether a rule's text names a command that
// needs the connection's ticket or hello kept (SSL::session,
// SSL::sessionticket, SSL::is_renegotiation_secure): the dataplane wraps
// the client's handshake for such rules alone (Program.ControlsSessions).
func controlsSessions(body string) bool {
	for i := 0; ; {
		j := strings.Index(body[i:], "SSL::session")
		if j < 0 {
			break
		}
		k := i + j + len("SSL::session")
		if k == len(body) || !isNameByte(body[k]) || strings.HasPrefix(body[k:], "ticket") {
			return true
		}
		i = k
	}
	return strings.Contains(body, "SSL::is_renegotiation_secure")
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
