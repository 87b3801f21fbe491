package authn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// directoryCA makes a CA and the directory's certificate for 127.166.3.1
// it signs, written as PEM files under dir for slapd.
func directoryCA(t *testing.T, dir string) (ca *x509.Certificate, certFile, keyFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "directory CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(der)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.166.3.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.166.3.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "dir.crt"), filepath.Join(dir, "dir.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ca, certFile, keyFile
}

// TestLDAPTLS binds over StartTLS and LDAPS to a real slapd: the
// directory's certificate is checked against the CA given
// (ssl-ca-cert-file with ssl-check-peer enabled), a CA that did not
// sign it is an error, and ssl-check-peer disabled takes any; a cipher
// selection the directory shares goes through.
func TestLDAPTLS(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	dir := t.TempDir()
	ca, certFile, keyFile := directoryCA(t, dir)
	other, _, _ := directoryCA(t, t.TempDir())
	sd, err := authntest.StartSlapdTLS(filepath.Join(dir, "slapd"), "127.166.3.1:3890", authntest.TLS{CertFile: certFile, KeyFile: keyFile, LDAPSAddr: "127.166.3.1:6360"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	pool := func(c *x509.Certificate) *x509.CertPool {
		p := x509.NewCertPool()
		p.AddCert(c)
		return p
	}
	verify := &tls.Config{RootCAs: pool(ca), MinVersion: tls.VersionTLS12}
	wrongCA := &tls.Config{RootCAs: pool(other), MinVersion: tls.VersionTLS12}
	anyPeer := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	tls12 := &tls.Config{RootCAs: pool(ca), MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}
	for _, c := range []struct {
		name string
		ssl  string
		port int
		tc   *tls.Config
		want authn.Status
	}{
		{"start-tls, verified", "start-tls", 3890, verify, authn.Success},
		{"ldaps, verified", "enabled", 6360, verify, authn.Success},
		{"start-tls, a CA that did not sign it", "start-tls", 3890, wrongCA, authn.Error},
		{"ldaps, a CA that did not sign it", "enabled", 6360, wrongCA, authn.Error},
		{"ldaps, check-peer disabled", "enabled", 6360, anyPeer, authn.Success},
		{"ldaps, TLS 1.2 and one suite", "enabled", 6360, tls12, authn.Success},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &authn.LDAP{Servers: []string{"127.166.3.1"}, Port: c.port, SSL: c.ssl, TLS: c.tc, BaseDN: "ou=people," + authntest.Suffix,
				Scope: ldap.ScopeWholeSubtree, BindDN: authntest.RootDN, BindPW: authntest.RootPW, BindTimeout: 5 * time.Second}
			r := l.Authenticate(ctx(t), authn.Request{Username: "carol", Password: "ldappw"})
			if r.Status != c.want {
				t.Fatalf("%v (%v), want %v", r.Status, r.Err, c.want)
			}
		})
	}
}
