package rules

import (
	"encoding/hex"

	"github.com/openltm/openltm/rules/tcl"
)

// SSLDataConn is implemented by a Conn that can hand a rule the decrypted
// bytes of a TLS side before anything else sees them (SSL::collect and
// CLIENTSSL_DATA or SERVERSSL_DATA): a rule inspecting the first bytes of
// a TLS-terminated protocol that is not HTTP. The bytes held are the
// side's payload (Conn.Payload), released with Conn.Release, and
// SSL::respond answers through Conn.Respond, encrypted for the peer; a
// Conn without it makes those commands Tcl errors.
type SSLDataConn interface {
	// SSLCollect holds the side's decrypted bytes for the rule: once at
	// least length are in (0: at each arrival) CLIENTSSL_DATA or
	// SERVERSSL_DATA runs. An error when the side does not speak TLS.
	SSLCollect(s Side, length int) error
}

func registerSSLData(t *tcl.Commands) {
	t.Register("SSL::collect", cmdSSLCollect)
	t.Register("SSL::payload", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sslData(in, "SSL::payload")
		if err != nil {
			return tcl.Empty, err
		}
		return payloadCmd(c, s.side, "SSL::payload", args)
	})
	t.Register("SSL::release", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sslData(in, "SSL::release")
		if err != nil {
			return tcl.Empty, err
		}
		n := -1
		switch len(args) {
		case 1:
		case 2:
			v, err := args[1].Int64()
			if err != nil || v < 0 {
				return tcl.Empty, tcl.Errorf("SSL::release: bad length %q: expected a byte count", args[1].String())
			}
			n = int(v)
		default:
			return tcl.Empty, tcl.WrongArgs("SSL::release ?length?")
		}
		return tcl.Empty, tclErr(c.Release(s.side, n))
	})
	t.Register("SSL::respond", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("SSL::respond data")
		}
		s, c, err := sslData(in, "SSL::respond")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.Respond(s.side, tcl.BytesOf(args[1])))
	})
	t.Register("SSL::modssl_sessionid_headers", cmdSSLModSSLHeaders)
	t.Register("SSL::renegotiate", cmdSSLRenegotiate)
	t.Register("SSL::forward_proxy", cmdSSLForwardProxy)
}

// sslData is the running event's session and connection for the
// SSL::collect family, an error where the connection cannot hold
// decrypted bytes for the rule.
func sslData(in *tcl.Interp, cmd string) (*ConnState, Conn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := c.(SSLDataConn); !ok {
		return nil, nil, tcl.Errorf("%s: this virtual server does not hand decrypted data to rules (a standard virtual server with a client-ssl or server-ssl profile does)", cmd)
	}
	return s, c, nil
}

// SSL::collect ?length?: hold the side's decrypted bytes for
// CLIENTSSL_DATA or SERVERSSL_DATA.
func cmdSSLCollect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::collect ?length?")
	}
	length := 0
	if len(args) == 2 {
		n, err := args[1].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("SSL::collect: bad length %q: expected a byte count", args[1].String())
		}
		length = int(n)
	}
	s, c, err := sslData(in, "SSL::collect")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.(SSLDataConn).SSLCollect(s.side, length))
}

// SSL::modssl_sessionid_headers ?initial|current?: the header name and
// value mod_ssl would add for the session (the ID the client offered, or
// the one the handshake used), as a list HTTP::header insert takes.
func cmdSSLModSSLHeaders(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	current := false
	switch {
	case len(args) == 1:
	case len(args) == 2 && args[1].String() == "initial":
	case len(args) == 2 && args[1].String() == "current":
		current = true
	default:
		return tcl.Empty, tcl.WrongArgs("SSL::modssl_sessionid_headers ?initial|current?")
	}
	info, err := sslInfo(in, "SSL::modssl_sessionid_headers")
	if err != nil {
		return tcl.Empty, err
	}
	if current {
		return tcl.Str(tcl.FormatList("SSLClientCurrentSessionId", hex.EncodeToString(info.SessionID))), nil
	}
	return tcl.Str(tcl.FormatList("SSLClientSessionId", hex.EncodeToString(info.DesiredSessionID))), nil
}

// SSL::renegotiate ?enable|disable?: openltm's TLS never starts a
// renegotiation, on either side, and its client-ssl side refuses every
// renegotiation a client asks for; so `disable` on the client side is
// what already holds, and the other forms are errors that say so rather
// than a renegotiation that silently does not happen.
func cmdSSLRenegotiate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 || (len(args) == 2 && args[1].String() != "enable" && args[1].String() != "disable") {
		return tcl.Empty, tcl.WrongArgs("SSL::renegotiate ?enable|disable?")
	}
	s, c, err := sess(in, "SSL::renegotiate")
	if err != nil {
		return tcl.Empty, err
	}
	if _, ok := c.(SSLConn); !ok {
		return tcl.Empty, tcl.Errorf("SSL::renegotiate: the virtual server has no client-ssl or server-ssl profile")
	}
	if len(args) == 2 && args[1].String() == "disable" && s.side == ClientSide {
		return tcl.Empty, nil
	}
	if len(args) == 2 && args[1].String() == "disable" {
		return tcl.Empty, tcl.Errorf("SSL::renegotiate disable: the server-ssl profile's renegotiation setting decides whether a member may renegotiate; it is not changed per connection")
	}
	return tcl.Empty, tcl.Errorf("SSL::renegotiate: openltm's TLS does not renegotiate (TLS 1.3 has no renegotiation; clients asking on TLS 1.2 are refused with a no_renegotiation alert)")
}

// SSLSettingsConn is implemented by a Conn whose TLS settings a rule may
// read, and change for one connection, as BIG-IP's SSL::mode,
// SSL::allow_nonssl and SSL::maximum_record_size do; a Conn without it
// makes those commands Tcl errors.
type SSLSettingsConn interface {
	// SSLMode reports whether the side speaks TLS: it has the profile,
	// no SSL::disable turned it off, and a client let through in
	// plaintext (allow-non-ssl) did not skip it.
	SSLMode(s Side) bool
	// SSLAllowNonSSL is the client side's allow-non-ssl for this
	// connection; with set, it becomes on first (before the client's
	// handshake, else an error).
	SSLAllowNonSSL(set, on bool) (bool, error)
	// SSLMaxRecord is the largest record of plaintext sent to the side's
	// peer; n > 0 sets it for this connection (an error outside the
	// profile property's bounds).
	SSLMaxRecord(s Side, n int) (int, error)
}

func registerSSLSettings(t *tcl.Commands) {
	t.Register("SSL::mode", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("SSL::mode")
		}
		s, c, err := sslSettings(in, "SSL::mode")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bool(c.SSLMode(s.side)), nil
	})
	t.Register("SSL::allow_nonssl", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		set, on := false, false
		switch {
		case len(args) == 1:
		case len(args) == 2 && (args[1].String() == "0" || args[1].String() == "1"):
			set, on = true, args[1].String() == "1"
		default:
			return tcl.Empty, tcl.WrongArgs("SSL::allow_nonssl ?0|1?")
		}
		_, c, err := sslSettings(in, "SSL::allow_nonssl")
		if err != nil {
			return tcl.Empty, err
		}
		v, err := c.SSLAllowNonSSL(set, on)
		if err != nil || set {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Bool(v), nil
	})
	t.Register("SSL::maximum_record_size", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		n := int64(0)
		switch len(args) {
		case 1:
		case 2:
			v, err := args[1].Int64()
			if err != nil || v <= 0 {
				return tcl.Empty, tcl.Errorf("SSL::maximum_record_size: bad size %q: expected a byte count", args[1].String())
			}
			n = v
		default:
			return tcl.Empty, tcl.WrongArgs("SSL::maximum_record_size ?size?")
		}
		s, c, err := sslSettings(in, "SSL::maximum_record_size")
		if err != nil {
			return tcl.Empty, err
		}
		v, err := c.SSLMaxRecord(s.side, int(min(n, 1<<30)))
		if err != nil || n > 0 {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Int(int64(v)), nil
	})
}

// sslSettings is the running event's session and connection for
// SSL::mode, SSL::allow_nonssl and SSL::maximum_record_size.
func sslSettings(in *tcl.Interp, cmd string) (*ConnState, SSLSettingsConn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	sc, ok := c.(SSLSettingsConn)
	if !ok {
		return nil, nil, tcl.Errorf("%s: this virtual server's TLS settings are not changed per connection (a standard virtual server with a client-ssl or server-ssl profile's are)", cmd)
	}
	return s, sc, nil
}

// ForwardProxyConn is implemented by a Conn on an SSL forward proxy whose
// bypass decision a rule may change (SSL::forward_proxy policy); a Conn
// without it makes the command a Tcl error.
type ForwardProxyConn interface {
	// ForwardProxyPolicy is the decision for this client, "bypass" or
	// "intercept", after setting it to set (when not "").
	ForwardProxyPolicy(set string) (string, error)
}

// SSL::forward_proxy policy ?bypass|intercept?: the SSL forward proxy's
// decision for this client, read or changed in CLIENTSSL_CLIENTHELLO.
// BIG-IP's other forms (cert, verified_handshake, cert response_control,
// extension) are Tcl errors saying so.
func cmdSSLForwardProxy(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::forward_proxy policy ?bypass|intercept?")
	}
	if args[1].String() != "policy" {
		return tcl.Empty, tcl.Errorf("SSL::forward_proxy %s: not implemented; openltm takes SSL::forward_proxy policy ?bypass|intercept?", args[1].String())
	}
	set := ""
	switch {
	case len(args) == 2:
	case len(args) == 3 && (args[2].String() == "bypass" || args[2].String() == "intercept"):
		set = args[2].String()
	default:
		return tcl.Empty, tcl.WrongArgs("SSL::forward_proxy policy ?bypass|intercept?")
	}
	_, c, err := sess(in, "SSL::forward_proxy")
	if err != nil {
		return tcl.Empty, err
	}
	fc, ok := c.(ForwardProxyConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("SSL::forward_proxy: this virtual server is not an SSL forward proxy whose decisions rules change (an http virtual server with ssl-forward-proxy enabled is)")
	}
	v, err := fc.ForwardProxyPolicy(set)
	if err != nil || set != "" {
		return tcl.Empty, tclErr(err)
	}
	return tcl.Str(v), nil
}
