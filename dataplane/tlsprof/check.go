package tlsprof

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Response controls: what a server-ssl profile does with a member whose
// certificate fails a check (expire-, untrusted-cert-response-control,
// revoked-cert-status-response-control).
const (
	ControlDrop   = "drop"
	ControlIgnore = "ignore"
	ControlMask   = "mask"
)

// peerCheck verifies a peer's chain as a profile requires, at the
// handshake: against its ca-file, within authenticate-depth, for its
// purpose, for authenticate-name, and against its CRLs; each failure
// ends the handshake unless the profile's response control for it says
// ignore.
type peerCheck struct {
	what            string
	roots           *x509.CertPool
	depth           int
	usage           x509.ExtKeyUsage
	name            string // authenticate-name; "" = any
	crl             *revocations
	ignoreExpired   bool
	ignoreUntrusted bool
	ignoreRevoked   bool
}

// errNoCert is the check's error when the peer sent no certificate.
var errNoCert = errors.New("the peer sent no certificate")

// check verifies chain (leaf first, as the peer sent it) at now.
func (k *peerCheck) check(chain []*x509.Certificate, now time.Time) error {
	if len(chain) == 0 {
		return errNoCert
	}
	leaf := chain[0]
	if k.name != "" && !nameOK(leaf, k.name) {
		return fmt.Errorf("%s: the peer's certificate is not for %q (authenticate-name)", k.what, k.name)
	}
	roots := k.roots
	if roots == nil {
		roots = x509.NewCertPool()
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{k.usage}}
	chains, err := leaf.Verify(opts)
	var inv x509.CertificateInvalidError
	if err != nil && errors.As(err, &inv) && inv.Reason == x509.Expired {
		if !k.ignoreExpired {
			return fmt.Errorf("%s: the peer's certificate %q is outside its validity period (expire-cert-response-control drop)", k.what, inv.Cert.Subject.CommonName)
		}
		// Expiry let through: the rest is checked as at a moment the
		// sent certificates were all valid.
		if at, ok := validAt(chain, now); ok {
			opts.CurrentTime = at
			chains, err = leaf.Verify(opts)
		}
	}
	if err != nil {
		if errors.As(err, &inv) && inv.Reason == x509.Expired && k.ignoreExpired {
			err = nil // an issuer's expiry, let through as well
		} else if !k.ignoreUntrusted {
			return fmt.Errorf("%s: the peer's certificate is not trusted: %v (untrusted-cert-response-control drop)", k.what, err)
		}
	}
	if len(chains) > 0 {
		deep := true
		for _, ch := range chains {
			if len(ch)-2 <= k.depth { // leaf and root do not count
				deep = false
				break
			}
		}
		if deep && !k.ignoreUntrusted {
			return fmt.Errorf("%s: the peer's certificate chain is deeper than authenticate-depth %d", k.what, k.depth)
		}
	}
	if k.crl != nil {
		c := chain
		if len(chains) > 0 {
			c = chains[0]
		}
		if r, expired := k.crl.revoked(c, now); r != nil && !k.ignoreRevoked {
			if expired {
				return fmt.Errorf("%s: the CRL for the peer's certificate %q is past its next update (allow-expired-crl disabled)", k.what, r.Subject.CommonName)
			}
			return fmt.Errorf("%s: the peer's certificate %q (serial %X) is revoked (crl-file)", k.what, r.Subject.CommonName, r.SerialNumber)
		}
	}
	return nil
}

// validAt is a moment within the validity of every certificate of chain,
// the nearest to now; false when there is none.
func validAt(chain []*x509.Certificate, now time.Time) (time.Time, bool) {
	lo, hi := chain[0].NotBefore, chain[0].NotAfter
	for _, c := range chain[1:] {
		if c.NotBefore.After(lo) {
			lo = c.NotBefore
		}
		if c.NotAfter.Before(hi) {
			hi = c.NotAfter
		}
	}
	switch {
	case lo.After(hi):
		return now, false
	case now.Before(lo):
		return lo, true
	case now.After(hi):
		return hi, true
	}
	return now, true
}

// nameOK reports whether c is for name: a DNS name or IP address among
// its subject alternative names, or, as BIG-IP's authenticate-name reads
// the subject, its common name [M].
func nameOK(c *x509.Certificate, name string) bool {
	return c.VerifyHostname(name) == nil || strings.EqualFold(c.Subject.CommonName, name)
}

// parseChain reads the certificates a peer sent.
func parseChain(raw [][]byte) ([]*x509.Certificate, error) {
	out := make([]*x509.Certificate, 0, len(raw))
	for _, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
