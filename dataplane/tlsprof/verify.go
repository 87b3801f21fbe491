package tlsprof

import (
	"crypto/x509"
	"errors"
	"time"
)

// OpenSSL's certificate verification results (X509_V_*), the numbers
// BIG-IP's SSL::verify_result gives: it reports OpenSSL's
// SSL_get_verify_result(), and rules compare with these numbers.
const (
	verifyOK                = 0  // X509_V_OK
	verifyUnspecified       = 1  // X509_V_ERR_UNSPECIFIED
	verifySignatureFailure  = 7  // X509_V_ERR_CERT_SIGNATURE_FAILURE
	verifyNotYetValid       = 9  // X509_V_ERR_CERT_NOT_YET_VALID
	verifyExpired           = 10 // X509_V_ERR_CERT_HAS_EXPIRED
	verifySelfSignedLeaf    = 18 // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
	verifySelfSignedInChain = 19 // X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
	verifyNoLocalIssuer     = 20 // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
	verifyChainTooLong      = 22 // X509_V_ERR_CERT_CHAIN_TOO_LONG
	verifyRevoked           = 23 // X509_V_ERR_CERT_REVOKED
	verifyCRLExpired        = 12 // X509_V_ERR_CRL_HAS_EXPIRED
	verifyInvalidCA         = 24 // X509_V_ERR_INVALID_CA
	verifyPathLength        = 25 // X509_V_ERR_PATH_LENGTH_EXCEEDED
	verifyInvalidPurpose    = 26 // X509_V_ERR_INVALID_PURPOSE
)

// verifier checks a peer's chain as the profile would: against its
// ca-file (none: an empty store, which trusts nothing, as OpenSSL's),
// for the peer's purpose, within authenticate-depth.
type verifier struct {
	roots *x509.CertPool
	depth int
	usage x509.ExtKeyUsage
	crl   *revocations // crl-file; nil: none
}

// VerifyResult is SSL::verify_result for a chain a peer sent (leaf
// first) to a connection of this profile: 0 when it verifies against
// the profile's ca-file, else OpenSSL's number for why not. No chain is
// 0, as OpenSSL reports for a peer that sent no certificate. It is
// computed when a rule asks, so that a profile that only requests a
// certificate (peer-cert-mode request) lets every client in and leaves
// the verdict to its rules, as BIG-IP does.
func (b *Built) VerifyResult(chain []*x509.Certificate) int {
	if len(chain) == 0 {
		return verifyOK
	}
	v := b.verify
	if v == nil {
		v = &verifier{depth: 9, usage: x509.ExtKeyUsageAny}
	}
	return v.result(chain, time.Now())
}

func (v *verifier) result(chain []*x509.Certificate, now time.Time) int {
	roots := v.roots
	if roots == nil {
		roots = x509.NewCertPool()
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	chains, err := chain[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{v.usage},
	})
	if err == nil {
		for _, ch := range chains {
			if len(ch)-2 <= v.depth { // leaf and root do not count
				if r, expired := v.crl.revoked(ch, now); r != nil {
					if expired {
						return verifyCRLExpired
					}
					return verifyRevoked
				}
				return verifyOK
			}
		}
		return verifyChainTooLong
	}
	var inv x509.CertificateInvalidError
	var unknown x509.UnknownAuthorityError
	var insecure x509.InsecureAlgorithmError
	switch {
	case errors.As(err, &inv):
		switch inv.Reason {
		case x509.Expired:
			if inv.Cert != nil && now.Before(inv.Cert.NotBefore) {
				return verifyNotYetValid
			}
			return verifyExpired
		case x509.IncompatibleUsage:
			return verifyInvalidPurpose
		case x509.NotAuthorizedToSign:
			return verifyInvalidCA
		case x509.TooManyIntermediates:
			return verifyPathLength
		}
	case errors.As(err, &unknown):
		for i := 0; i+1 < len(chain); i++ {
			if issued(chain[i+1], chain[i]) && !chain[i+1].IsCA {
				return verifyInvalidCA
			}
		}
		last := chain[len(chain)-1]
		if selfSigned(last) {
			if len(chain) == 1 {
				return verifySelfSignedLeaf
			}
			return verifySelfSignedInChain
		}
		return verifyNoLocalIssuer
	case errors.As(err, &insecure):
		return verifySignatureFailure
	}
	return verifyUnspecified
}

// revoked is the certificate of chain (as a peer sent it) that v's CRLs
// revoke (or whose list has expired: revocations.revoked), nil when
// none: checked along the chain verified against ca-file when it
// verifies, else along the chain as sent.
func (v *verifier) revoked(chain []*x509.Certificate, now time.Time) (*x509.Certificate, bool) {
	if v.crl == nil || len(chain) == 0 {
		return nil, false
	}
	if v.roots != nil {
		inter := x509.NewCertPool()
		for _, c := range chain[1:] {
			inter.AddCert(c)
		}
		if chains, err := chain[0].Verify(x509.VerifyOptions{Roots: v.roots, Intermediates: inter, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
			return v.crl.revoked(chains[0], now)
		}
	}
	return v.crl.revoked(chain, now)
}

// selfSigned reports whether c signed itself.
func selfSigned(c *x509.Certificate) bool { return issued(c, c) }

// issued reports whether parent's key signed c, whether or not parent
// may sign certificates (which Verify judges).
func issued(parent, c *x509.Certificate) bool {
	return string(c.RawIssuer) == string(parent.RawSubject) &&
		parent.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}
