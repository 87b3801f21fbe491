package rules

import (
	"crypto/x509"
	"encoding/asn1"

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
	// C3DExtension adds an extension (dotted OID, value) to the
	// certificate the member is shown (SSL::c3d extension), for members
	// that read a role or account from it.
	C3DExtension(oid string, value []byte) error
	// C3DLifespan and C3DStartDate set that certificate's validity for
	// this connection (SSL::c3d cert_lifespan HOURS, cert_start_date
	// DATE), in place of the profile's c3d-cert-lifespan from now.
	C3DLifespan(hours string) error
	C3DStartDate(date string) error
}

// cmdSSLC3D is SSL::c3d cert CERT, SSL::c3d subject commonName VALUE,
// SSL::c3d extension OID VALUE, SSL::c3d cert_lifespan HOURS and
// SSL::c3d cert_start_date DATE, as F5 documents them (clouddocs
// SSL__c3d): CERT is a certificate in DER (SSL::cert 0, X509::pem2der)
// or PEM; an extension's VALUE is its DER, or text (a UTF8String) [M];
// DATE is seconds since 1970 or an ASN.1 time (20260102030405Z) [M].
func cmdSSLC3D(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "SSL::c3d cert certificate | SSL::c3d subject commonName value | SSL::c3d extension oid value | SSL::c3d cert_lifespan hours | SSL::c3d cert_start_date date"
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
	case "cert", "subject", "extension", "cert_lifespan", "cert_start_date":
		var ok bool
		if cc, ok = c.(C3DConn); !ok {
			return tcl.Empty, tcl.Errorf("SSL::c3d: the virtual server's SSL profiles do not have ssl-c3d enabled")
		}
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
	case sub == "extension" && len(args) == 4:
		// The value's DER as given (binary, from b64decode or binary
		// format), else the text as a UTF8String [M].
		val := tcl.BytesOf(args[3])
		if !isDER(val) {
			var err error
			if val, err = asn1.MarshalWithParams(args[3].String(), "utf8"); err != nil {
				return tcl.Empty, tcl.Errorf("SSL::c3d extension: %v", err)
			}
		}
		return tcl.Empty, cc.C3DExtension(args[2].String(), val)
	case sub == "cert_lifespan" && len(args) == 3:
		return tcl.Empty, cc.C3DLifespan(args[2].String())
	case sub == "cert_start_date" && len(args) == 3:
		return tcl.Empty, cc.C3DStartDate(args[2].String())
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// isDER reports whether b is one whole DER element.
func isDER(b []byte) bool {
	var raw asn1.RawValue
	rest, err := asn1.Unmarshal(b, &raw)
	return err == nil && len(rest) == 0 && len(b) > 0
}
