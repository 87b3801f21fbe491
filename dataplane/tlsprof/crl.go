package tlsprof

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"
)

// CRL is a `sys file ssl-crl`: one or more certificate revocation lists
// (PEM, or one DER list), parsed once, that a profile's crl-file names so
// that a peer whose certificate its issuer revoked is turned away.
type CRL struct {
	Name  string
	Path  string
	Lists []*x509.RevocationList
}

// LoadCRL reads a CRL file for the ssl-crl object name.
func LoadCRL(name, path string) (*CRL, error) {
	data, err := readFile("ssl-crl", name, path)
	if err != nil {
		return nil, err
	}
	c, err := ParseCRL(name, data)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// ParseCRL reads X509 CRL PEM blocks (or a single DER list, as openssl ca
// -gencrl -outform DER writes); anything else is refused, so that a
// certificate given by mistake is caught when the object is created.
func ParseCRL(name string, data []byte) (*CRL, error) {
	c := &CRL{Name: name}
	rest := data
	for n := 1; ; n++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "X509 CRL" {
			return nil, fmt.Errorf("sys file ssl-crl %s: PEM block %d is %q, not an X509 CRL", name, n, b.Type)
		}
		l, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("sys file ssl-crl %s: CRL %d: %v", name, n, err)
		}
		c.Lists = append(c.Lists, l)
	}
	if len(c.Lists) == 0 {
		l, err := x509.ParseRevocationList(data)
		if err != nil {
			return nil, fmt.Errorf("sys file ssl-crl %s: no CRL found (the file must hold -----BEGIN X509 CRL----- blocks, or one DER list)", name)
		}
		c.Lists = append(c.Lists, l)
	}
	return c, nil
}

// revocations is a profile's CRLs indexed for the handshake: by issuer
// name, the lists and their revoked serial numbers.
type revocations struct {
	byIssuer map[string][]*revList
	// allowExpired is allow-expired-crl: a list past its next update
	// still counts; otherwise a certificate it covers fails as revoked.
	allowExpired bool
}

type revList struct {
	list    *x509.RevocationList
	serials map[string]bool
}

func indexCRL(c *CRL, allowExpired bool) *revocations {
	if c == nil {
		return nil
	}
	r := &revocations{byIssuer: map[string][]*revList{}, allowExpired: allowExpired}
	for _, l := range c.Lists {
		rl := &revList{list: l, serials: make(map[string]bool, len(l.RevokedCertificateEntries))}
		for _, e := range l.RevokedCertificateEntries {
			rl.serials[string(e.SerialNumber.Bytes())] = true
		}
		r.byIssuer[string(l.RawIssuer)] = append(r.byIssuer[string(l.RawIssuer)], rl)
	}
	return r
}

// revoked reports the first certificate of chain (leaf first, its issuer
// after it when known) that a list of r revokes, nil when none; expired
// says it failed because its issuer's list is past its next update
// (without allow-expired-crl) rather than listing it. A list counts
// when its issuer is the certificate's and, when the issuer's
// certificate is in the chain, it carries the issuer's signature; with
// no issuer certificate to hand (an untrusted chain let through), the
// administrator's list is taken on its issuer name [M].
func (r *revocations) revoked(chain []*x509.Certificate, now time.Time) (c *x509.Certificate, expired bool) {
	if r == nil {
		return nil, false
	}
	for i, c := range chain {
		for _, l := range r.byIssuer[string(c.RawIssuer)] {
			if i+1 < len(chain) && l.list.CheckSignatureFrom(chain[i+1]) != nil {
				continue
			}
			if !r.allowExpired && !l.list.NextUpdate.IsZero() && now.After(l.list.NextUpdate) {
				return c, true
			}
			if l.serials[string(c.SerialNumber.Bytes())] {
				return c, false
			}
		}
	}
	return nil, false
}
