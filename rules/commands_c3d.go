package rules

import (
	"crypto/x509"

	"github.com/openltm/openltm/rules/tcl"
)

// C3DConn is implemented by an SSLConn whose virtual delegates client
// certificates (client-ssl and server-ssl with ssl-c3d enabled): a rule
// chooses, before the member's handshake, what the member is shown
// (SSL::c3d). Conns without it answer SSL::c3d with an error.
type C3DConn interface {
	// C3DCert makes c, in place of the client's certificate, the one the
	// member is shown a copy of (SSL::c3d cert): for clients that prove
	// who they are otherwise (a header from an authenticating proxy).
	C3DCert(c *x509.Certificate) error
	// C3DCommonName sets the common name of the subject the member is
	// shown (SSL::c3d subject commonName), for members that map users by
	// a name the client's certificate does not carry as they want it.
	C3DCommonName(cn string) error
}

// cmdSSLC3D is SSL::c3d cert CERT and SSL::c3d subject commonName VALUE,
// as F5 documents them (clouddocs SSL__c3d): CERT is a certificate in
// DER (SSL::cert 0, X509::pem2der) or PEM. The extension, cert_lifespan
// and cert_start_date forms are F5's too but not done by openltm: an
// error says so.
func cmdSSLC3D(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "SSL::c3d cert certificate | SSL::c3d subject commonName value"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	_, c, err := sess(in, "SSL::c3d")
	if err != nil {
		return tcl.Empty, err
	}
	sub := args[1].String()
	var cc C3DConn
	switch sub {
	case "cert", "subject":
		var ok bool
		if cc, ok = c.(C3DConn); !ok {
			return tcl.Empty, tcl.Errorf("SSL::c3d: the virtual server's SSL profiles do not have ssl-c3d enabled")
		}
	case "extension", "cert_lifespan", "cert_start_date":
		return tcl.Empty, tcl.Errorf("SSL::c3d %s is not supported by openltm", sub)
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch {
	case sub == "cert" && len(args) == 3:
		crt, err := certArg("SSL::c3d cert", args[2])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, cc.C3DCert(crt)
	case sub == "subject" && len(args) == 4:
		if f := args[2].String(); f != "commonName" && f != "CN" {
			return tcl.Empty, tcl.Errorf("SSL::c3d subject: %q: only commonName can be set", f)
		}
		return tcl.Empty, cc.C3DCommonName(args[3].String())
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}
