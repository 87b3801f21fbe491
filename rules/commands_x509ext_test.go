package rules

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

type testCerts struct {
	caPEM, leafPEM, ecPEM string
	leaf                  *x509.Certificate
}

var (
	certsOnce sync.Once
	certs     testCerts
	certsErr  error
)

// x509Certs makes, once, an EC CA and an RSA leaf it signed carrying
// the extensions X509::extensions decodes (the CA, self-signed, has no
// authority key identifier; the leaf has one).
func x509Certs(t *testing.T) testCerts {
	t.Helper()
	certsOnce.Do(func() {
		caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			certsErr = err
			return
		}
		ca := &x509.Certificate{
			SerialNumber: big.NewInt(0x1234567890),
			Subject: pkix.Name{Country: []string{"US"}, Organization: []string{"Example, Inc."}, CommonName: "Example CA",
				ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "ca@example.com"}}},
			NotBefore: time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC), NotAfter: time.Date(2034, 3, 4, 5, 6, 7, 0, time.UTC),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
			BasicConstraintsValid: true, IsCA: true, MaxPathLen: 1,
			PermittedDNSDomains: []string{"example.com"}, ExcludedDNSDomains: []string{"bad.example.com"},
			PermittedIPRanges: []*net.IPNet{{IP: net.IP{192, 0, 2, 0}, Mask: net.CIDRMask(24, 32)}},
		}
		caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
		if err != nil {
			certsErr = err
			return
		}
		caCert, _ := x509.ParseCertificate(caDER)
		leafKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			certsErr = err
			return
		}
		u, _ := url.Parse("https://www.example.com/id")
		leaf := &x509.Certificate{
			SerialNumber: big.NewInt(0xf1b4badbda902f79 >> 1),
			Subject:      pkix.Name{Country: []string{"US"}, Province: []string{"WA"}, Locality: []string{"Seattle"}, OrganizationalUnit: []string{"Web"}, CommonName: "www.example.com"},
			NotBefore:    time.Date(2024, 12, 4, 8, 13, 52, 0, time.UTC), NotAfter: time.Date(2025, 12, 3, 8, 13, 52, 0, time.UTC),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			BasicConstraintsValid: true,
			DNSNames:              []string{"www.example.com", "example.com"},
			IPAddresses:           []net.IP{net.ParseIP("192.0.2.1"), net.ParseIP("2001:db8::1")},
			EmailAddresses:        []string{"web@example.com"}, URIs: []*url.URL{u},
			CRLDistributionPoints: []string{"http://crl.example.com/ca.crl"},
			OCSPServer:            []string{"http://ocsp.example.com"}, IssuingCertificateURL: []string{"http://ca.example.com/ca.crt"},
			ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, Value: []byte{0x04, 0x03, 'a', 'b', 1}}},
		}
		leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
		if err != nil {
			certsErr = err
			return
		}
		certs.leaf, _ = x509.ParseCertificate(leafDER)
		enc := func(der []byte) string {
			return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		}
		certs.caPEM, certs.leafPEM, certs.ecPEM = enc(caDER), enc(leafDER), enc(caDER)
	})
	if certsErr != nil {
		t.Fatal(certsErr)
	}
	return certs
}

// x509Eval runs one command in RULE_INIT-free context (the X509:: ones
// need no connection) with $c set to cert.
func x509Eval(t *testing.T, cert, script string) (string, error) {
	t.Helper()
	p := NewProgram(&Env{}, mustCompile(t, "x", "when CLIENT_ACCEPTED {\n set ::r ["+script+"]\n}"))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if _, err := s.in.SetVar("c", tcl.Str(cert)); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ClientAccepted); err != nil {
		return "", err
	}
	v, _ := s.Var("r")
	return v, nil
}

func TestX509ExtCommands(t *testing.T) {
	c := x509Certs(t)
	md := md5.Sum(c.leaf.Raw)
	for _, tc := range []struct {
		cert, script, want string
	}{
		{c.leafPEM, "X509::subject_public_key_type $c", "RSA"},
		{c.leafPEM, "X509::subject_public_key_RSA_bits $c", "2048"},
		{c.leafPEM, "X509::subject_public_key $c", "RSA 2048"},
		{c.leafPEM, "X509::subject_public_key bits $c", "2048"},
		{c.leafPEM, "X509::subject_public_key curve_name $c", ""},
		{c.ecPEM, "X509::subject_public_key type $c", "EC"},
		{c.ecPEM, "X509::subject_public_key curve_name $c", "prime256v1"},
		{c.ecPEM, "X509::subject_public_key $c", "EC 256"},
		{c.leafPEM, "string length [X509::pem2der $c]", strconv.Itoa(len(c.leaf.Raw))},
		{c.leafPEM, "X509::subject_public_key_type [X509::pem2der $c]", "RSA"},
		{c.leafPEM, "X509::version [X509::pem2der $c]", "3"},
		{c.leafPEM, "X509::verify_cert_error_string 0", "ok"},
		{c.leafPEM, "X509::verify_cert_error_string 10", "certificate has expired"},
		{c.leafPEM, "X509::verify_cert_error_string 18", "self signed certificate"},
		{c.leafPEM, "X509::verify_cert_error_string 50", "application verification failure"},
		{c.leafPEM, "X509::verify_cert_error_string 500", "unknown certificate verification error"},
		{c.leafPEM, "X509::cert_fields $c 0", "SSLClientCertStatus OK"},
		{"", "X509::cert_fields {} 0 whole", "SSLClientCertStatus NoClientCert"},
		{c.leafPEM, "X509::cert_fields $c 20 hash versionnum",
			"SSLClientCertStatus {unable to get local issuer certificate} SSLClientCertHash " + colonHex(md[:]) + " SSLClientCertVersion 3"},
		{c.leafPEM, "X509::cert_fields $c 0 {validity subpubkey serial}",
			"SSLClientCertStatus OK SSLClientCertSerialNumber 78:da:5d:6d:ed:48:17:bc SSLClientCertSubjectPublicKey {RSA 2048} " +
				"SSLClientCertNotValidBefore {Dec  4 08:13:52 2024 GMT} SSLClientCertNotValidAfter {Dec  3 08:13:52 2025 GMT}"},
		{c.leafPEM, "X509::cert_fields $c 0 issuer sigalg subject",
			`SSLClientCertStatus OK SSLClientCertIssuer {C=US, O="Example, Inc.", CN=Example CA, emailAddress=ca@example.com} ` +
				`SSLClientCertSignatureAlgorithm ecdsa-with-SHA256 SSLClientCertSubject {C=US, ST=WA, L=Seattle, OU=Web, CN=www.example.com}`},
		{c.leafPEM, "lindex [X509::cert_fields $c 0 whole] 3", c.leafPEM},
		{c.leafPEM, "string match {*X509v3 extensions:*X509v3 Basic*} [X509::extensions $c]", "1"},
	} {
		got, err := x509Eval(t, tc.cert, tc.script)
		if err != nil {
			t.Errorf("%s: %v", tc.script, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.script, got, tc.want)
		}
	}
	for _, tc := range []struct{ script, err string }{
		{"X509::extensions", "wrong # args"},
		{"X509::pem2der $c x", "wrong # args"},
		{"X509::subject_public_key size $c", "wrong # args"},
		{"X509::subject_public_key_RSA_bits [lindex $c 0]", "not a certificate"},
		{"X509::cert_fields $c", "wrong # args"},
		{"X509::cert_fields $c 0 hash colour", `bad option "colour"`},
		{"X509::cert_fields $c x", "expected integer"},
		{"X509::verify_cert_error_string", "wrong # args"},
	} {
		if _, err := x509Eval(t, c.leafPEM, tc.script); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.script, err, tc.err)
		}
	}
	if _, err := x509Eval(t, c.ecPEM, "X509::subject_public_key_RSA_bits $c"); err == nil || !strings.Contains(err.Error(), "not RSA") {
		t.Errorf("RSA bits of an EC key: %v", err)
	}
}

// TestX509AgainstOpenSSL compares the texts that follow OpenSSL's with
// what the openssl command prints for the same certificates.
func TestX509AgainstOpenSSL(t *testing.T) {
	bin, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed: the OpenSSL-format comparisons are skipped")
	}
	c := x509Certs(t)
	dir := t.TempDir()
	openssl := func(cert string, args ...string) string {
		t.Helper()
		f := filepath.Join(dir, "c.pem")
		if err := os.WriteFile(f, []byte(cert), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, append([]string{"x509", "-in", f, "-noout"}, args...)...).Output()
		if err != nil {
			t.Fatalf("openssl %v: %v", args, err)
		}
		return string(out)
	}
	for name, cert := range map[string]string{"leaf": c.leafPEM, "ca": c.caPEM} {
		t.Run(name, func(t *testing.T) {
			text := openssl(cert, "-text")
			i := strings.Index(text, "        X509v3 extensions:\n")
			j := strings.Index(text, "\n    Signature Algorithm:")
			if i < 0 || j < i {
				t.Fatalf("no extensions in openssl's text:\n%s", text)
			}
			got, err := x509Eval(t, cert, "X509::extensions $c")
			if err != nil {
				t.Fatal(err)
			}
			if want := text[i : j+1]; got != want {
				t.Errorf("X509::extensions:\n%s\nopenssl x509 -text:\n%s", got, want)
			}
			for _, f := range []struct{ field, flag, prefix string }{
				{"subject", "-subject", "subject="}, {"issuer", "-issuer", "issuer="},
			} {
				want := strings.TrimSpace(strings.TrimPrefix(openssl(cert, f.flag, "-nameopt", "oneline,-space_eq"), f.prefix))
				got, err := x509Eval(t, cert, "lindex [X509::cert_fields $c 0 "+f.field+"] 3")
				if err != nil || got != want {
					t.Errorf("%s: %q (%v), openssl: %q", f.field, got, err, want)
				}
			}
			fp := strings.TrimSpace(openssl(cert, "-fingerprint", "-md5"))
			fp = strings.ToLower(fp[strings.Index(fp, "=")+1:])
			if got, _ := x509Eval(t, cert, "lindex [X509::cert_fields $c 0 hash] 3"); got != fp {
				t.Errorf("hash %q, openssl md5 fingerprint %q", got, fp)
			}
			sig := text[strings.Index(text, "Signature Algorithm: ")+len("Signature Algorithm: "):]
			sig = sig[:strings.Index(sig, "\n")]
			if got, _ := x509Eval(t, cert, "lindex [X509::cert_fields $c 0 sigalg] 3"); got != sig {
				t.Errorf("sigalg %q, openssl %q", got, sig)
			}
			serial := strings.TrimPrefix(strings.TrimSpace(openssl(cert, "-serial")), "serial=")
			got, _ = x509Eval(t, cert, "lindex [X509::cert_fields $c 0 serial] 3")
			if strings.ToUpper(strings.ReplaceAll(got, ":", "")) != serial {
				t.Errorf("serial %q, openssl %q", got, serial)
			}
		})
	}
}
