package daemon

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
)

// ocspGood is an openssl index line saying the certificate of serial
// (subject CN cn) is good, valid a day more.
func ocspGood(cn string, serial int64) string {
	return fmt.Sprintf("V\t%s\t\t%X\tunknown\t/CN=%s\n", time.Now().Add(24*time.Hour).UTC().Format("060102150405Z"), serial, cn)
}

// ocspResponder starts openssl's OCSP responder for p's CA at addr (port
// 0: any), over an index file holding index; signer and signerKey (PEM
// files) sign its answers, the CA itself when both are "". It stops with
// the test.
func (p *testPKI) ocspResponder(t *testing.T, addr, index, signer, signerKey string) *ocsptest.Responder {
	t.Helper()
	if signer == "" {
		kd, err := x509.MarshalPKCS8PrivateKey(p.caKey)
		if err != nil {
			t.Fatal(err)
		}
		signer, signerKey = filepath.Join(p.dir, "ca.crt"), p.write(t, "ca.key", "PRIVATE KEY", kd)
	}
	path := filepath.Join(p.dir, "index.txt")
	if err := os.WriteFile(path, []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &ocsptest.Responder{Index: path, CA: filepath.Join(p.dir, "ca.crt"), Signer: signer, SignerKey: signerKey, Minutes: 10}
	if err := r.Start(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// staplingSetup is what the client-ssl stapling tests share: openssl's
// responder at net.9 saying app.example is good, a labelled member S1 at
// net.11:9000, a plane-backed session, and the certificate app.crt
// (key app.key, issuer ca.crt) checked by the OCSP validator v of that
// responder. Skips
// where openssl cannot answer.
func staplingSetup(t *testing.T, net string) (*Session, *testPKI, *ocsptest.Responder) {
	t.Helper()
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	r := pki.ocspResponder(t, net+".9:0", ocspGood("app.example", pki.serial), "", "")
	labelServer(t, net+".11:9000", "S1")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create sys crypto cert-validator ocsp v responder-url "+r.URL()+" cache-timeout 300",
		"modify sys file ssl-cert app.crt cert-validators replace-all-with { v } cert-validation-options { ocsp } issuer-cert ca.crt",
	)
	return s, pki, r
}
