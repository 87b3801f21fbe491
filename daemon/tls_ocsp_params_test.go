package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
	"golang.org/x/crypto/ocsp"
)

// TestOCSPStaplingParams: BIG-IP 11.6-13.0 stapling, an `ltm profile
// ocsp-stapling-params` named from a client-ssl profile's cert-key-chain
// entry, staples openssl's answer: trusted-ca gives the issuer and trusts
// the responder's certificate, strict-resp-cert-check then refuses it, a
// params object without responder-url asks the responder the
// certificate's AIA names, cache-timeout renews the answer ahead while it
// is used. An unknown name, a params object in use, a certificate whose
// issuer is nowhere and values BIG-IP does not take are refused. A
// certificate-authority profile is kept with a warning that says why.
func TestOCSPStaplingParams(t *testing.T) {
	t.Parallel()
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	appSerial := pki.serial
	signer, signerKey := pki.leaf(t, "signer", "signer.example", false) // server auth, not OCSP signing
	index := filepath.Join(pki.dir, "index.txt")
	r := &ocsptest.Responder{Index: index, CA: filepath.Join(pki.dir, "ca.crt"), Signer: signer, SignerKey: signerKey, Minutes: 10}
	if err := r.Start("127.244.1.9:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	aiaCrt, aiaKey := leafWithAIA(t, pki, "aia", "aia.example", r.URL())
	aiaSerial := pki.serial
	notAfter := time.Now().Add(24 * time.Hour).UTC().Format("060102150405Z")
	os.WriteFile(index, []byte(fmt.Sprintf("V\t%s\t\t%X\tunknown\t/CN=app.example\nR\t%s\t%s\t%X\tunknown\t/CN=aia.example\n",
		notAfter, appSerial, notAfter, time.Now().Add(-time.Hour).UTC().Format("060102150405Z"), aiaSerial)), 0o600)
	labelServer(t, "127.244.1.11:9000", "S1")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"install sys crypto cert aia.crt from-local-file "+aiaCrt,
		"install sys crypto key aia.key from-local-file "+aiaKey,
		"create ltm pool p members add { 127.244.1.11:9000 }",
	)
	out, errOut := run(t, s, "create ltm profile ocsp-stapling-params p1 responder-url "+r.URL()+" trusted-ca ca.crt cache-error-timeout 1")
	if errOut != "" || strings.Contains(out, "does not act on") {
		t.Fatalf("create: %s\n%s", errOut, out)
	}
	out, errOut = run(t, s, "create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key ocsp-stapling-params p1 } } ocsp-stapling enabled")
	if errOut != "" || strings.Contains(out, "does not act on") {
		t.Fatalf("client-ssl: %s\n%s", errOut, out)
	}
	mustRun(t, s, "create ltm virtual vs destination 127.244.1.1:443 pool p profiles replace-all-with { tcp stapled }")
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	staple := func(want bool) { t.Helper(); waitStaple(t, "127.244.1.1:443", cfg, want) }
	staple(true)
	status := func(addr, name string) int {
		t.Helper()
		c, err := tls.DialWithDialer(clientDialer, "tcp", addr, &tls.Config{RootCAs: pki.roots, ServerName: name})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cs := c.ConnectionState()
		resp, err := ocsp.ParseResponseForCert(cs.OCSPResponse, cs.PeerCertificates[0], pki.ca)
		if err != nil {
			t.Fatalf("%s: staple: %v", addr, err)
		}
		return resp.Status
	}
	if st := status("127.244.1.1:443", "app.example"); st != ocsp.Good {
		t.Fatalf("status %d, want good", st)
	}
	if out, _ := run(t, s, "list ltm profile client-ssl stapled cert-key-chain"); !strings.Contains(out, "ocsp-stapling-params p1") {
		t.Fatalf("list:\n%s", out)
	}
	// strict-resp-cert-check: the responder's certificate is not for OCSP
	// signing, so its answers are refused.
	mustRun(t, s, "modify ltm profile ocsp-stapling-params p1 strict-resp-cert-check enabled")
	staple(false)
	mustRun(t, s, "modify ltm profile ocsp-stapling-params p1 strict-resp-cert-check disabled")
	staple(true)

	// No responder-url: the certificate's AIA; the answer says revoked.
	mustRun(t, s,
		"create ltm profile ocsp-stapling-params p_aia trusted-ca ca.crt",
		"create ltm profile client-ssl stapled_aia cert-key-chain replace-all-with { aia { cert aia.crt key aia.key ocsp-stapling-params p_aia } } ocsp-stapling enabled",
		"create ltm virtual vs_aia destination 127.244.1.2:443 pool p profiles replace-all-with { tcp stapled_aia }",
	)
	waitStaple(t, "127.244.1.2:443", &tls.Config{RootCAs: pki.roots, ServerName: "aia.example"}, true)
	if st := status("127.244.1.2:443", "aia.example"); st != ocsp.Revoked {
		t.Fatalf("AIA: status %d, want revoked", st)
	}

	// cache-timeout 2: the answer in use is asked again ahead of its end.
	mustRun(t, s, "modify ltm profile ocsp-stapling-params p1 cache-timeout 2")
	staple(true)
	before := r.Requests()
	for i := 0; i < 60 && r.Requests() < before+2; i++ {
		staple(true)
		time.Sleep(100 * time.Millisecond)
	}
	if n := r.Requests() - before; n < 2 {
		t.Fatalf("%d exchanges in 6 s with cache-timeout 2, want the answer renewed", n)
	}

	// Refused, nothing changed.
	for _, tc := range []struct{ cmd, msg string }{
		{"modify ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key ocsp-stapling-params nosuch } }", "/Common/nosuch) was not found"},
		{"delete ltm profile ocsp-stapling-params p1", "01070265"},
		{"modify ltm profile ocsp-stapling-params p1 trusted-ca none", "needs its issuer"},
		{"modify ltm profile ocsp-stapling-params p1 sign-hash md5", "md5"},
		{"modify ltm profile ocsp-stapling-params p1 use-proxy-server enabled", "use-proxy-server enabled requires a proxy-server-pool"},
		{"modify ltm profile ocsp-stapling-params p1 responder-url ldap://127.244.1.9/", "not an http:// or https:// URL"},
		{"modify ltm profile ocsp-stapling-params p1 dns-resolver nosuch", "nosuch"},
	} {
		out, errOut := run(t, s, tc.cmd)
		if !strings.Contains(errOut, tc.msg) {
			t.Errorf("%s: %q (out %q), want %q", tc.cmd, errOut, out, tc.msg)
		}
	}
	if out, _ := run(t, s, "list ltm profile ocsp-stapling-params p1"); !strings.Contains(out, "trusted-ca ca.crt") || strings.Contains(out, "md5") {
		t.Fatalf("a refused change stayed:\n%s", out)
	}
	staple(true)

	// certificate-authority: kept, and the warning says why.
	out, errOut = run(t, s, "create ltm profile certificate-authority clients_ca ca-file ca.crt authenticate-depth 4")
	if errOut != "" || !strings.Contains(out, "ltm profile certificate-authority /Common/clients_ca is kept and saved back; openltm does not act on it (its ca-file, crl-file, authenticate-depth and update-crl authenticate no client") {
		t.Fatalf("certificate-authority: %s\n%s", errOut, out)
	}
	if out, _ := run(t, s, "list ltm profile certificate-authority clients_ca"); !strings.Contains(out, "authenticate-depth 4") {
		t.Fatalf("list:\n%s", out)
	}
	if _, errOut := run(t, s, "modify ltm profile certificate-authority clients_ca update-crl sometimes"); !strings.Contains(errOut, "sometimes") {
		t.Fatalf("update-crl sometimes: %q", errOut)
	}
}

// leafWithAIA issues a server certificate for cn whose Authority
// Information Access names responder as its OCSP responder.
func leafWithAIA(t *testing.T, p *testPKI, name, cn, responder string) (string, string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{cn},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		OCSPServer: []string{responder}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	return p.write(t, name+".crt", "CERTIFICATE", der), p.write(t, name+".key", "PRIVATE KEY", kd)
}

// TestOCSPStaplingParamsProxy: ocsp-stapling-params reach a responder
// whose name only an HTTP proxy resolves through their proxy-server-pool
// only with use-proxy-server enabled; disabled, the pool is not used and
// nothing is stapled.
func TestOCSPStaplingParamsProxy(t *testing.T) {
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	appSerial := pki.serial
	signer, signerKey := pki.leaf(t, "signer", "signer.example", false)
	r := pki.ocspResponder(t, "127.244.3.9:0", ocspGood("app.example", appSerial), signer, signerKey)
	_, port, _ := net.SplitHostPort(r.Addr())
	var forwarded atomic.Int32
	proxy := forwardProxy(t, "127.244.3.20:0", "ocsp.openltm.test", "127.244.3.9", &forwarded)
	labelServer(t, "127.244.3.11:9000", "S1")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create ltm pool p members add { 127.244.3.11:9000 }",
		"create ltm pool proxies members add { "+proxy+" }",
		"create ltm profile ocsp-stapling-params p1 responder-url http://ocsp.openltm.test:"+port+" trusted-ca ca.crt proxy-server-pool proxies cache-error-timeout 1",
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key ocsp-stapling-params p1 } } ocsp-stapling enabled",
		"create ltm virtual vs destination 127.244.3.1:443 pool p profiles replace-all-with { tcp stapled }",
	)
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	staple := func(want bool) { t.Helper(); waitStaple(t, "127.244.3.1:443", cfg, want) }
	staple(false) // use-proxy-server disabled: the system's resolver does not know the name
	if forwarded.Load() != 0 {
		t.Fatalf("use-proxy-server disabled, but the proxy forwarded %d requests", forwarded.Load())
	}
	out, errOut := run(t, s, "modify ltm profile ocsp-stapling-params p1 use-proxy-server enabled")
	if errOut != "" || strings.Contains(out, "does not act on") {
		t.Fatalf("use-proxy-server: %s\n%s", errOut, out)
	}
	staple(true)
	if forwarded.Load() == 0 {
		t.Fatal("stapled, but the proxy forwarded no request")
	}
	if out, errOut := run(t, s, "delete ltm pool proxies"); !strings.Contains(errOut, "in use") {
		t.Fatalf("deleting the parameters' pool: %q\n%s", errOut, out)
	}
}
