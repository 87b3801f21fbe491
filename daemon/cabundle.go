package daemon

import (
	"fmt"
	"os"
	"strings"
)

// caBundleName is BIG-IP's built-in bundle of public certificate
// authorities (sys file ssl-cert /Common/ca-bundle.crt), which server-ssl
// profiles' ca-file commonly names. openltm ships the object and reads
// the system's bundle of public CAs for it, as both are the public web's
// roots [M: F5 builds its own bundle; its certificates and their order
// are not the system's]; a source-path set on it takes precedence.
const caBundleName = "/Common/ca-bundle.crt"

// systemCABundles are where Linux distributions keep the system's CA
// bundle (the files Go's crypto/x509 reads), after SSL_CERT_FILE.
var systemCABundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine
}

// systemCABundle is the path of the system's CA bundle: the first of
// SSL_CERT_FILE and systemCABundles that is a regular file.
func systemCABundle() (string, error) {
	paths := systemCABundles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		paths = append([]string{f}, paths...)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("the system has no CA bundle (looked for %s); give it a source-path", strings.Join(paths, ", "))
}
