package authn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// clientCert makes a certificate with the given subject, signed by a
// throwaway CA.
func clientCert(t *testing.T, subject pkix.Name) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// uidName is a subject with a UID.
func uidName(uid, cn string) pkix.Name {
	return pkix.Name{CommonName: cn, ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, Value: uid}}}
}

// TestSSLCCLDAP: client certificates looked up in a real slapd, by the
// user their subject names and by the certificate an entry holds, then
// checked against the valid groups.
func TestSSLCCLDAP(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	sd, err := authntest.StartSlapd(t.TempDir(), "127.145.0.30:3890")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	carol := clientCert(t, uidName("carol", "Carol C"))
	dave := clientCert(t, pkix.Name{CommonName: "dave"})
	erin := clientCert(t, uidName("erin", "Erin"))
	stranger := clientCert(t, uidName("mallory", "Mallory"))
	if err := authntest.AddCertificate(sd.Addr, "uid=dave,ou=people,"+authntest.Suffix, dave.Raw); err != nil {
		t.Fatal(err)
	}
	base := authn.SSLCCLDAP{Servers: []string{"127.145.0.99:3890", sd.Addr}, AdminDN: authntest.RootDN, AdminPW: authntest.RootPW,
		UserBase: "ou=people," + authntest.Suffix, UserClass: "inetOrgPerson", UserKey: "uid",
		GroupBase: "ou=groups," + authntest.Suffix, GroupKey: "cn", GroupMemberKey: "member", ValidGroups: []string{"admins", "staff"}, Timeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		typ    string
		groups bool
		cert   *x509.Certificate
		want   authn.Status
		user   string
	}{
		{"user by uid", "user", true, carol, authn.Success, "carol"},
		{"user by cn", "user", true, dave, authn.Success, "dave"},
		{"not in a valid group", "user", true, erin, authn.Failure, ""},
		{"no groups asked", "user", false, erin, authn.Success, "erin"},
		{"unknown user", "user", true, stranger, authn.Failure, ""},
		{"by certificate", "cert", true, dave, authn.Success, "dave"},
		{"certificate not held", "cert", true, carol, authn.Failure, ""},
		{"no certificate", "user", true, nil, authn.Failure, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := base
			l.SearchType = c.typ
			if !c.groups {
				l.ValidGroups = nil
			}
			res := l.Authenticate(ctx(t), authn.Request{Cert: c.cert})
			if res.Status != c.want {
				t.Fatalf("%v (%v), want %v", res.Status, res.Err, c.want)
			}
			if c.user != "" && (len(res.Data) == 0 || res.Data[0].Value != c.user) {
				t.Fatalf("data %v, want user %s", res.Data, c.user)
			}
		})
	}
	l := base
	l.Servers = []string{"127.145.0.99:3890"}
	if res := l.Authenticate(ctx(t), authn.Request{Cert: carol}); res.Status != authn.Error {
		t.Fatalf("no server: %v", res.Status)
	}
}
