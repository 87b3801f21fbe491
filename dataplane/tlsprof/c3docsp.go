package tlsprof

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"
)

// C3DOCSP is client-ssl's c3d-ocsp: on a virtual that delegates client
// certificates (ssl-c3d), the client's certificate's status is asked of
// an OCSP responder before the member is shown a copy of it, so that a
// revoked user is not delegated. The validator's answers are cached as
// server-ssl's ocsp caches them.
type C3DOCSP struct {
	// Validator is the sys crypto cert-validator ocsp c3d-ocsp names.
	Validator *OCSP
	// DropUnknown is c3d-drop-unknown-ocsp-status drop (BIG-IP's
	// default): a status unknown, or none to be had, ends the handshake;
	// ignore lets the client in.
	DropUnknown bool
}

// c3dOCSP adds c's check of the client's certificate to cfg's
// verification (after the profile's own); the issuer is looked for in
// the client's chain, then in cas (ca-file).
func c3dOCSP(cfg *tls.Config, what string, c *C3DOCSP, cas *Cert) {
	var roots []*x509.Certificate
	if cas != nil {
		roots = cas.Certs
	}
	prev := cfg.VerifyConnection
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if prev != nil {
			if err := prev(cs); err != nil {
				return err
			}
		}
		if len(cs.PeerCertificates) == 0 {
			return nil
		}
		return c.check(what, cs.PeerCertificates, roots, time.Now())
	}
}

// check ends the handshake when the client's certificate is revoked, or
// its status is unknown or cannot be had and DropUnknown says so.
func (c *C3DOCSP) check(what string, chain, roots []*x509.Certificate, now time.Time) error {
	leaf := chain[0]
	var status string
	var err error
	if issuer := issuerOf(leaf, chain[1:], roots); issuer == nil {
		err = fmt.Errorf("the issuer of %q is neither in the client's chain nor in ca-file", leaf.Subject.CommonName)
	} else {
		status, err = memberStatus(c.Validator, leaf, issuer, now)
	}
	switch {
	case status == OCSPRevoked:
		return fmt.Errorf("%s: the client's certificate %q (serial %X) is revoked (c3d-ocsp, cert-validator %s)", what, leaf.Subject.CommonName, leaf.SerialNumber, c.Validator.Name)
	case status == OCSPGood, !c.DropUnknown:
		return nil
	case err != nil:
		return fmt.Errorf("%s: no OCSP status for the client's certificate %q (c3d-drop-unknown-ocsp-status drop): %v", what, leaf.Subject.CommonName, err)
	default:
		return fmt.Errorf("%s: the client's certificate %q has OCSP status unknown (c3d-drop-unknown-ocsp-status drop)", what, leaf.Subject.CommonName)
	}
}
