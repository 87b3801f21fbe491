package tlsprof

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"
)

// mint makes a certificate for name signed by parent (itself when nil).
func mint(t *testing.T, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool, from, to time.Time, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: from, NotAfter: to, BasicConstraintsValid: true, IsCA: ca,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

// The numbers are OpenSSL's (X509_V_*), which rules compare
// SSL::verify_result with.
func TestVerifyResult(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	from, to := now.Add(-day), now.Add(day)
	client := x509.ExtKeyUsageClientAuth
	root, rootKey := mint(t, "root", nil, nil, true, from, to, x509.ExtKeyUsageAny)
	inter, interKey := mint(t, "inter", root, rootKey, true, from, to, x509.ExtKeyUsageAny)
	leaf, _ := mint(t, "leaf", inter, interKey, false, from, to, client)
	expired, _ := mint(t, "old", inter, interKey, false, now.Add(-2*day), now.Add(-day), client)
	future, _ := mint(t, "new", inter, interKey, false, now.Add(day), now.Add(2*day), client)
	serverOnly, _ := mint(t, "server", inter, interKey, false, from, to, x509.ExtKeyUsageServerAuth)
	self, _ := mint(t, "self", nil, nil, false, from, to, client)
	otherRoot, otherKey := mint(t, "other root", nil, nil, true, from, to, x509.ExtKeyUsageAny)
	stranger, _ := mint(t, "stranger", otherRoot, otherKey, false, from, to, client)
	notCA, notCAKey := mint(t, "not a ca", root, rootKey, false, from, to, x509.ExtKeyUsageAny)
	underNotCA, _ := mint(t, "under", notCA, notCAKey, false, from, to, client)

	roots := x509.NewCertPool()
	roots.AddCert(root)
	for _, c := range []struct {
		name  string
		chain []*x509.Certificate
		depth int
		want  int
	}{
		{"valid", []*x509.Certificate{leaf, inter}, 9, 0},
		{"no certificate", nil, 9, 0},
		{"missing intermediate", []*x509.Certificate{leaf}, 9, 20},
		{"expired", []*x509.Certificate{expired, inter}, 9, 10},
		{"not yet valid", []*x509.Certificate{future, inter}, 9, 9},
		{"server certificate as a client's", []*x509.Certificate{serverOnly, inter}, 9, 26},
		{"self-signed", []*x509.Certificate{self}, 9, 18},
		{"another CA's", []*x509.Certificate{stranger}, 9, 20},
		{"another CA's, root sent", []*x509.Certificate{stranger, otherRoot}, 9, 19},
		{"signed by a non-CA", []*x509.Certificate{underNotCA, notCA}, 9, 24},
		{"deeper than authenticate-depth", []*x509.Certificate{leaf, inter}, 0, 22},
	} {
		b := &Built{verify: &verifier{roots: roots, depth: c.depth, usage: client}}
		if got := b.VerifyResult(c.chain); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// A profile without a ca-file trusts nothing, as OpenSSL with an
	// empty store.
	if got := (&Built{verify: &verifier{depth: 9, usage: client}}).VerifyResult([]*x509.Certificate{leaf, inter}); got != 19 && got != 20 {
		t.Errorf("without a ca-file: %d, want 20 (or 19)", got)
	}
}
