package tlsprof

import (
	"crypto/ed25519"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
)

// signHashSchemes are the signature schemes a profile's ssl-sign-hash
// leaves the handshake's own signatures (ServerKeyExchange and
// CertificateVerify): the RSA (PSS first, as crypto/tls prefers) and
// ECDSA schemes over that hash. "any" (and "") restricts nothing.
var signHashSchemes = map[string][]tls.SignatureScheme{
	"sha1":   {tls.PKCS1WithSHA1, tls.ECDSAWithSHA1},
	"sha256": {tls.PSSWithSHA256, tls.ECDSAWithP256AndSHA256, tls.PKCS1WithSHA256},
	"sha384": {tls.PSSWithSHA384, tls.ECDSAWithP384AndSHA384, tls.PKCS1WithSHA384},
}

// signHash applies ssl-sign-hash h to cfg's certificates and version
// range: the schemes each certificate may sign with, and for sha1, which
// TLS 1.3 forbids, a top version of TLS 1.2 (a warning) or an error when
// nothing below TLS 1.3 is left.
func signHash(what, h string, cfg *tls.Config) ([]string, error) {
	if h == "" || h == "any" {
		return nil, nil
	}
	schemes, ok := signHashSchemes[h]
	if !ok {
		return nil, fmt.Errorf("%s: ssl-sign-hash %q is not valid (any, sha1, sha256, sha384)", what, h)
	}
	if h == "sha1" && !sha1Allowed() {
		return nil, fmt.Errorf("%s: ssl-sign-hash sha1: Go's TLS refuses SHA-1 handshake signatures (RFC 9155) unless the daemon runs with GODEBUG=tlssha1=1", what)
	}
	certs := cfg.Certificates
	for i := range certs {
		if _, ed := certs[i].PrivateKey.(ed25519.PrivateKey); ed {
			return nil, fmt.Errorf("%s: ssl-sign-hash %s cannot apply to an Ed25519 key (it signs with its own hash); set ssl-sign-hash any", what, h)
		}
		certs[i].SupportedSignatureAlgorithms = schemes
	}
	var warns []string
	if h == "sha1" && cfg.MaxVersion == tls.VersionTLS13 {
		if cfg.MinVersion == tls.VersionTLS13 {
			return nil, fmt.Errorf("%s: ssl-sign-hash sha1 leaves no protocol version (TLS 1.3 has no SHA-1 signatures and the ciphers and options allow only TLSv1.3)", what)
		}
		cfg.MaxVersion = tls.VersionTLS12
		warns = append(warns, what+": ssl-sign-hash sha1 turns TLSv1.3 off (TLS 1.3 has no SHA-1 signatures)")
	}
	return warns, nil
}

// sha1Allowed reports whether crypto/tls signs with SHA-1 in TLS 1.2,
// which it does only under GODEBUG tlssha1=1 (the last setting wins).
func sha1Allowed() bool {
	on := false
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "tlssha1" {
			on = v == "1"
		}
	}
	return on
}
