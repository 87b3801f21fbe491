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
