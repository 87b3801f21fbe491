package tlsprof

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestPeerCheck: each check of a member's chain drops the handshake, or
// lets it go on when its response control says ignore; the name and the
// depth are checked whatever the controls.
func TestPeerCheck(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	from, to := now.Add(-day), now.Add(day)
	server := x509.ExtKeyUsageServerAuth
	root, rootKey := mint(t, "root", nil, nil, true, from, to, x509.ExtKeyUsageAny)
	root.KeyUsage |= x509.KeyUsageCRLSign
	good, _ := mint(t, "good.example", root, rootKey, false, from, to, server)
	expired, _ := mint(t, "old.example", root, rootKey, false, now.Add(-2*day), now.Add(-day), server)
	revoked, _ := mint(t, "revoked.example", root, rootKey, false, from, to, server)
	otherRoot, otherKey := mint(t, "other root", nil, nil, true, from, to, x509.ExtKeyUsageAny)
	stranger, _ := mint(t, "stranger.example", otherRoot, otherKey, false, from, to, server)
	oldStranger, _ := mint(t, "old-stranger.example", otherRoot, otherKey, false, now.Add(-2*day), now.Add(-day), server)
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: from, NextUpdate: to,
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: revoked.SerialNumber, RevocationTime: now}}}, root, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	list, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatal(err)
	}
	// A list with the same issuer name not signed by the issuer counts
	// for nothing.
	forgedDER, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(2), ThisUpdate: from, NextUpdate: to,
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: good.SerialNumber, RevocationTime: now}}},
		&x509.Certificate{Subject: root.Subject, KeyUsage: x509.KeyUsageCRLSign, SubjectKeyId: []byte{1}}, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := x509.ParseRevocationList(forgedDER)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root)
	crl := indexCRL(&CRL{Name: "/Common/ca.crl", Lists: []*x509.RevocationList{list, forged}}, false)
	chain := func(c *x509.Certificate) []*x509.Certificate { return []*x509.Certificate{c} }
	for _, tc := range []struct {
		name                       string
		peer                       []*x509.Certificate
		expired, untrusted, revokd bool // ignore
		auth                       string
		depth                      int
		err                        string // "" = let through
	}{
		{name: "good", peer: chain(good)},
		{name: "good, named", peer: chain(good), auth: "good.example"},
		{name: "good, another name", peer: chain(good), auth: "other.example", untrusted: true, expired: true, revokd: true, err: "authenticate-name"},
		{name: "expired", peer: chain(expired), err: "expire-cert-response-control drop"},
		{name: "expired, ignored", peer: chain(expired), expired: true},
		{name: "expired, untrusted ignored", peer: chain(expired), untrusted: true, err: "expire-cert-response-control drop"},
		{name: "untrusted", peer: chain(stranger), err: "untrusted-cert-response-control drop"},
		{name: "untrusted, ignored", peer: chain(stranger), untrusted: true},
		{name: "untrusted and expired, expiry ignored", peer: chain(oldStranger), expired: true, err: "untrusted-cert-response-control drop"},
		{name: "untrusted and expired, both ignored", peer: chain(oldStranger), expired: true, untrusted: true},
		{name: "revoked", peer: chain(revoked), err: "is revoked"},
		{name: "revoked, ignored", peer: chain(revoked), revokd: true},
		{name: "revoked, others ignored", peer: chain(revoked), expired: true, untrusted: true, err: "is revoked"},
		{name: "none sent", peer: nil, expired: true, untrusted: true, revokd: true, err: "no certificate"},
	} {
		k := &peerCheck{what: "profile server-ssl /Common/ss", roots: roots, depth: 9, usage: server, name: tc.auth, crl: crl,
			ignoreExpired: tc.expired, ignoreUntrusted: tc.untrusted, ignoreRevoked: tc.revokd}
		err := k.check(tc.peer, now)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// SSL::verify_result says 23 (X509_V_ERR_CERT_REVOKED) for a revoked
	// certificate that otherwise verifies.
	v := &verifier{roots: roots, depth: 9, usage: server, crl: crl}
	if got := v.result(chain(revoked), now); got != verifyRevoked {
		t.Errorf("verify result of a revoked certificate: %d", got)
	}
	if got := v.result(chain(good), now); got != verifyOK {
		t.Errorf("verify result of a good certificate: %d", got)
	}

	// A list past its next update: the certificates it covers fail as
	// revoked (12, X509_V_ERR_CRL_HAS_EXPIRED) unless allow-expired-crl.
	oldDER, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(3), ThisUpdate: now.Add(-2 * time.Hour), NextUpdate: now.Add(-time.Hour)}, root, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	old, err := x509.ParseRevocationList(oldDER)
	if err != nil {
		t.Fatal(err)
	}
	oldCRL := &CRL{Name: "/Common/old.crl", Lists: []*x509.RevocationList{old}}
	for _, tc := range []struct {
		allow, ignore bool
		err           string
	}{
		{false, false, "past its next update (allow-expired-crl disabled)"},
		{true, false, ""},
		{false, true, ""},
	} {
		k := &peerCheck{what: "ss", roots: roots, depth: 9, usage: server, crl: indexCRL(oldCRL, tc.allow), ignoreRevoked: tc.ignore}
		err := k.check(chain(good), now)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("expired CRL, allow %v, ignore %v: %v, want %q", tc.allow, tc.ignore, err, tc.err)
		}
	}
	v = &verifier{roots: roots, depth: 9, usage: server, crl: indexCRL(oldCRL, false)}
	if got := v.result(chain(good), now); got != verifyCRLExpired {
		t.Errorf("verify result under an expired CRL: %d", got)
	}
}

// TestCRLFiles: PEM lists, one DER list, and a certificate given by
// mistake is refused with what the file holds.
func TestCRLFiles(t *testing.T) {
	now := time.Now()
	root, rootKey := mint(t, "root", nil, nil, true, now.Add(-time.Hour), now.Add(time.Hour), x509.ExtKeyUsageAny)
	root.KeyUsage |= x509.KeyUsageCRLSign
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: now, NextUpdate: now.Add(time.Hour)}, root, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	pemList := string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}))
	certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw}))
	for _, tc := range []struct {
		name, data string
		lists      int
		err        string
	}{
		{"one PEM list", pemList, 1, ""},
		{"two PEM lists", pemList + pemList, 2, ""},
		{"DER", string(der), 1, ""},
		{"a certificate", certPEM, 0, `PEM block 1 is "CERTIFICATE", not an X509 CRL`},
		{"nothing", "hello\n", 0, "no CRL found"},
	} {
		c, err := ParseCRL("/Common/x.crl", []byte(tc.data))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || len(c.Lists) != tc.lists {
			t.Errorf("%s: %v, %d lists", tc.name, err, len(c.Lists))
		}
	}
}
