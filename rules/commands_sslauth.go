package rules

import (
	"encoding/asn1"
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// SSLAuthConn is implemented by a Conn whose TLS certificate checks a
// rule may change for one connection, as BIG-IP's SSL::authenticate and
// SSL::secure_renegotiation do; a Conn without it makes those commands
// Tcl errors.
type SSLAuthConn interface {
	// SSLAuthDepth holds the side's peer chain to depth intermediate
	// certificates (the profile's authenticate-depth otherwise), set
	// before the side's certificate is checked: the client's in
	// CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO, the member's before its
	// handshake starts (SERVER_CONNECTED, SERVERSSL_CLIENTHELLO_SEND).
	SSLAuthDepth(s Side, depth int) error
	// SSLAuthFrequency is the client side's authenticate once or always:
	// always authenticates a client that would reuse its session again,
	// in a full handshake that asks for its certificate, when set before
	// its hello is answered (CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO).
	SSLAuthFrequency(always bool) error
	// SSLSecureRenegotiation is the side's secure-renegotiation mode (0
	// request, 1 require, 2 require-strict); with set >= 0 it becomes
	// set first, before the side's hello is answered.
	SSLSecureRenegotiation(s Side, set int) (int, error)
}

func registerSSLAuth(t *tcl.Commands) {
	// SSL::authenticate once|always, SSL::authenticate depth N: the
	// side's (the running event's) certificate checks for this
	// connection. once and always are the client side's alone, as F5
	// documents: once authenticates the client once per SSL session,
	// always also when it reuses the session, which here is a full
	// handshake in place of the resumption (crypto/tls never renegotiates
	// as a server, so a connection's one handshake is the only one to
	// authenticate at) [M].
	t.Register("SSL::authenticate", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		const usage = "SSL::authenticate once | always | depth number"
		s, c, err := sslAuth(in, "SSL::authenticate")
		if err != nil {
			return tcl.Empty, err
		}
		switch {
		case len(args) == 2 && (args[1].String() == "once" || args[1].String() == "always"):
			if s.side != ClientSide {
				return tcl.Empty, tcl.Errorf("SSL::authenticate %s: valid in a client-side context only", args[1].String())
			}
			return tcl.Empty, tclErr(c.SSLAuthFrequency(args[1].String() == "always"))
		case len(args) == 3 && args[1].String() == "depth":
			n, err := strconv.Atoi(args[2].String())
			if err != nil || n < 0 || n > 255 {
				return tcl.Empty, tcl.Errorf("SSL::authenticate depth: %q is not a depth from 0 to 255", args[2].String())
			}
			return tcl.Empty, tclErr(c.SSLAuthDepth(s.side, n))
		}
		return tcl.Empty, tcl.WrongArgs(usage)
	})
	// SSL::secure_renegotiation ?request|require|require-strict?: the
	// side's mode, 0, 1 or 2 as F5 numbers them; set, require-strict
	// turns away a peer that does not offer (the client) or agree to (the
	// member) RFC 5746 secure renegotiation.
	t.Register("SSL::secure_renegotiation", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		set := -1
		switch len(args) {
		case 1:
		case 2:
			m, ok := secureRenegotiationModes[args[1].String()]
			if !ok {
				return tcl.Empty, tcl.WrongArgs("SSL::secure_renegotiation ?request|require|require-strict?")
			}
			set = m
		default:
			return tcl.Empty, tcl.WrongArgs("SSL::secure_renegotiation ?request|require|require-strict?")
		}
		s, c, err := sslAuth(in, "SSL::secure_renegotiation")
		if err != nil {
			return tcl.Empty, err
		}
		m, err := c.SSLSecureRenegotiation(s.side, set)
		if err != nil || set >= 0 {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Int(int64(m)), nil
	})
	// SSL::cert_constraint OID VALUE: an extension added to the
	// certificate the member is shown (client certificate constrained
	// delegation), as SSL::c3d extension adds it; VALUE is DER, else text
	// (a UTF8String) [M].
	t.Register("SSL::cert_constraint", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("SSL::cert_constraint oid value")
		}
		_, c, err := sess(in, "SSL::cert_constraint")
		if err != nil {
			return tcl.Empty, err
		}
		cc, ok := c.(C3DConn)
		if !ok {
			return tcl.Empty, tcl.Errorf("SSL::cert_constraint: the virtual server's SSL profiles do not have ssl-c3d enabled")
		}
		val := tcl.BytesOf(args[2])
		if !isDER(val) {
			if val, err = asn1.MarshalWithParams(args[2].String(), "utf8"); err != nil {
				return tcl.Empty, tcl.Errorf("SSL::cert_constraint: %v", err)
			}
		}
		return tcl.Empty, tclErr(cc.C3DExtension(args[1].String(), val))
	})
}

var secureRenegotiationModes = map[string]int{"request": 0, "require": 1, "require-strict": 2}

// sslAuth is the running event's session and connection for
// SSL::authenticate and SSL::secure_renegotiation.
func sslAuth(in *tcl.Interp, cmd string) (*ConnState, SSLAuthConn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	ac, ok := c.(SSLAuthConn)
	if !ok {
		return nil, nil, tcl.Errorf("%s: the virtual server has no client-ssl or server-ssl profile", cmd)
	}
	return s, ac, nil
}
