package tlsprof

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki is a test CA with leaf certificates written as PEM files.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPath string
	serial int64
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openltm test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pki{dir: t.TempDir(), caCert: ca, caKey: key, serial: 1}
	p.caPath = p.write(t, "ca.crt", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaf issues a certificate for names ("rsa" or "ecdsa" key) and returns
// the cert and key file paths.
func (p *pki) leaf(t testing.TB, file, kind string, client bool, names ...string) (string, string) {
	t.Helper()
	var key crypto.Signer
	var err error
	if kind == "rsa" {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, file+".crt", "CERTIFICATE", der), p.write(t, file+".key", "PRIVATE KEY", kder)
}

func (p *pki) chain(t testing.TB, file, kind string, names ...string) CertKeyChain {
	t.Helper()
	cp, kp := p.leaf(t, file, kind, false, names...)
	c, err := LoadCert("/Common/"+file+".crt", cp)
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadKey("/Common/"+file+".key", kp, "")
	if err != nil {
		t.Fatal(err)
	}
	return CertKeyChain{Name: file, Cert: c, Key: k}
}

func (p *pki) ca(t testing.TB) *Cert {
	c, err := LoadCert("/Common/ca.crt", p.caPath)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseCiphers(t *testing.T) {
	for _, tc := range []struct {
		str       string
		has, not  []string
		versions  string
		errSubstr string
	}{
		{str: "DEFAULT", has: []string{"ECDHE-RSA-AES128-GCM-SHA256", "AES128-SHA", "TLS13-AES128-GCM-SHA256", "DES-CBC3-SHA"}, not: []string{"RC4-SHA", "NULL-SHA", "EXP-RC4-MD5"}, versions: "TLSv1, TLSv1.1, TLSv1.2, TLSv1.3"},
		{str: "!SSLv3:!RC4:ECDHE+AES-GCM", has: []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384"}, not: []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "AES128-GCM-SHA256"}, versions: "TLSv1.2"},
		{str: "ECDHE:ECDHE_ECDSA", has: []string{"ECDHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES256-GCM-SHA384"}, not: []string{"AES128-SHA", "DHE-RSA-AES128-SHA"}},
		{str: "DEFAULT:!TLSv1:!TLSv1_1", has: []string{"AES128-SHA"}, versions: "TLSv1.2, TLSv1.3"},
		{str: "AES128-SHA:-AES128-SHA:AES128-SHA", has: []string{"AES128-SHA"}},
		{str: "AES128-SHA:!AES128-SHA:AES128-SHA", not: []string{"AES128-SHA"}},
		{str: "HIGH:!aNULL:@STRENGTH", has: []string{"ECDHE-RSA-AES256-GCM-SHA384"}, not: []string{"DES-CBC3-SHA", "ADH-AES128-SHA"}},
		{str: "TLS13", has: []string{"TLS13-CHACHA20-POLY1305-SHA256"}, versions: "TLSv1.3"},
		{str: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 ECDHE-RSA-AES128-CBC-SHA", has: []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-SHA"}},
		{str: "DEFAULT:+SHA:+3DES:+kEDH", has: []string{"AES128-SHA", "DES-CBC3-SHA", "ECDHE-RSA-AES128-GCM-SHA256"}},
		{str: BuiltinRules["/Common/f5-secure"].Cipher, has: []string{"ECDHE-RSA-AES128-GCM-SHA256", "AES256-GCM-SHA384", "DES-CBC3-SHA"}, not: []string{"RC4-SHA", "DES-CBC-SHA", "ECDHE-ECDSA-AES128-SHA"}, versions: "TLSv1, TLSv1.1, TLSv1.2"},
		{str: "DEFAULT:FROB", errSubstr: `column 9: unknown cipher keyword or suite "FROB"`},
		{str: "ECDHE+BOGUS", errSubstr: `column 1: unknown cipher keyword or suite "BOGUS"`},
		{str: "DEFAULT:@FASTEST", errSubstr: "unknown sort directive"},
	} {
		t.Run(tc.str, func(t *testing.T) {
			l, err := ParseCiphers(tc.str)
			if tc.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("err = %v, want %q", err, tc.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantSuites(t, l, tc.has, tc.not)
			if tc.versions != "" {
				if got := versionNames(l.Versions()); got != tc.versions {
					t.Errorf("versions %s, want %s", got, tc.versions)
				}
			}
		})
	}
}

func TestSelectionRefusesWhatGoCannotDo(t *testing.T) {
	_, _, err := selection("profile client-ssl /Common/x", "DHE:CAMELLIA", nil)
	if err == nil || !strings.Contains(err.Error(), "DHE-RSA-AES128-SHA") || !strings.Contains(err.Error(), "cannot do") {
		t.Fatalf("err = %v", err)
	}
	l, warns, err := selection("p", "DHE:ECDHE+AES-GCM", nil)
	if err != nil || len(warns) == 0 || !strings.Contains(warns[0], "DHE-RSA-AES128-GCM-SHA256") {
		t.Fatalf("selection = %v %v %v", l, warns, err)
	}
	if _, _, err := selection("p", "!ALL", nil); err == nil || !strings.Contains(err.Error(), "selects no cipher suite") {
		t.Fatalf("empty selection: %v", err)
	}
	_, warns, _ = selection("p", "TLS13-AES128-GCM-SHA256:ECDHE+AES-GCM", nil)
	if len(warns) != 1 || !strings.Contains(warns[0], "TLS 1.3") {
		t.Fatalf("partial TLS 1.3 warnings: %v", warns)
	}
}

func TestCipherGroup(t *testing.T) {
	g := &CipherGroup{Name: "/Common/g",
		Allow:    []*CipherRule{BuiltinRules["/Common/f5-default"]},
		Restrict: []*CipherRule{BuiltinRules["/Common/f5-ecc"]},
		Exclude:  []*CipherRule{{Name: "/Common/nocbc", Cipher: "AES-CBC:3DES"}},
	}
	l, err := g.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"} {
		if !l.Has(n) {
			t.Errorf("%s missing: %v", n, l.Names())
		}
	}
	for _, n := range []string{"AES128-GCM-SHA256", "ECDHE-RSA-AES128-SHA", "TLS13-AES128-GCM-SHA256", "ECDHE-RSA-DES-CBC3-SHA"} {
		if l.Has(n) {
			t.Errorf("%s selected: %v", n, l.Names())
		}
	}
	if _, err := (&CipherGroup{Name: "/Common/e"}).Resolve(); err == nil {
		t.Fatal("a group with no allow rule is accepted")
	}
	bad := &CipherGroup{Name: "/Common/b", Allow: []*CipherRule{{Name: "/Common/r", Cipher: "NOPE"}}}
	if _, err := bad.Resolve(); err == nil || !strings.Contains(err.Error(), "cipher rule /Common/r") {
		t.Fatalf("bad rule: %v", err)
	}
}

func TestPairMismatch(t *testing.T) {
	p := newPKI(t)
	a := p.chain(t, "a", "rsa", "a.example")
	b := p.chain(t, "b", "rsa", "b.example")
	_, err := Pair("/Common/cs", a.Cert, b.Key, nil)
	if !errors.Is(err, ErrKeyMismatch) || !strings.Contains(err.Error(), "01070313:3: Error reading key PEM file") ||
		!strings.Contains(err.Error(), "for profile /Common/cs") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Pair("/Common/cs", a.Cert, a.Key, p.ca(t)); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not pem"), 0o600)
	if _, err := LoadCert("/Common/j.crt", junk); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("cert: %v", err)
	}
	if _, err := LoadKey("/Common/j.key", junk, ""); err == nil || !strings.Contains(err.Error(), "no PEM private key") {
		t.Fatalf("key: %v", err)
	}
	if _, err := LoadCert("/Common/m.crt", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	p := newPKI(t)
	_, kp := p.leaf(t, "k", "ecdsa", false, "k.example")
	if _, err := LoadCert("/Common/k.crt", kp); err == nil || !strings.Contains(err.Error(), `"PRIVATE KEY", not a CERTIFICATE`) {
		t.Fatalf("key as cert: %v", err)
	}
}

// serve accepts TLS connections with cfg on loopback and answers each
// handshake with a small HTTP response.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				tc := c.(*tls.Conn)
				if err := tc.Handshake(); err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
			}()
		}
	}()
	return ln.Addr().String()
}

func TestEncryptedKey(t *testing.T) {
	p := newPKI(t)
	cp, kp := p.leaf(t, "enc", "rsa", false, "enc.example")
	plain, err := LoadKey("/Common/enc.key", kp, "")
	if err != nil {
		t.Fatal(err)
	}
	der := x509.MarshalPKCS1PrivateKey(plain.Signer.(*rsa.PrivateKey))
	//lint:ignore SA1019 the test writes the legacy encrypted PEM BIG-IP keys with a passphrase use.
	blk, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", der, []byte("s3cret"), x509.PEMCipherAES128)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.dir, "enc-protected.key")
	os.WriteFile(path, pem.EncodeToMemory(blk), 0o600)
	if _, err := LoadKey("/Common/e.key", path, ""); err == nil || !strings.Contains(err.Error(), "no passphrase") {
		t.Fatalf("no passphrase: %v", err)
	}
	if _, err := LoadKey("/Common/e.key", path, "wrong"); err == nil {
		t.Fatal("wrong passphrase accepted")
	}
	k, err := LoadKey("/Common/e.key", path, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := LoadCert("/Common/enc.crt", cp)
	if _, err := Pair("/Common/p", c, k, nil); err != nil {
		t.Fatal(err)
	}
}
