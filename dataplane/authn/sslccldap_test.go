package authn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"slices"
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

// issued makes a certificate with the given subject and serial number,
// signed by ca (whose key is caKey).
func issued(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, subject pkix.Name, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testCA is a CA certificate and its key.
func testCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, Organization: []string{"Example, Inc."}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

// TestSSLCCLDAPCertmap: search-type certmap against a real slapd: the
// issuer's map entry admits its certificates (the subject naming the
// user), or, with certmap-user-serial, the entry of the certificate's
// issuer and serial number names the user; then the user's roles
// (role-key) must hold a valid role, and its groups a valid group.
func TestSSLCCLDAPCertmap(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	sd, err := authntest.StartSlapd(t.TempDir(), "127.158.0.30:3890")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	ca, caKey := testCA(t, "Test CA")
	other, otherKey := testCA(t, "Other CA")
	carol := issued(t, ca, caKey, uidName("carol", "Carol C"), 1001)
	dave := issued(t, ca, caKey, pkix.Name{CommonName: "someone"}, 0x2a)
	erin := issued(t, ca, caKey, uidName("erin", "Erin"), 77)
	stray := issued(t, other, otherKey, uidName("carol", "Carol C"), 1001)
	sfx := authntest.Suffix
	for _, e := range []struct {
		dn    string
		attrs map[string][]string
	}{
		{"ou=issuers," + sfx, map[string][]string{"objectClass": {"organizationalUnit"}, "ou": {"issuers"}}},
		{"ou=certs," + sfx, map[string][]string{"objectClass": {"organizationalUnit"}, "ou": {"certs"}}},
		{"cn=test-ca,ou=issuers," + sfx, map[string][]string{"objectClass": {"device"}, "cn": {"test-ca"}, "description": {ca.Subject.String()}}},
		// dave's certificate by its serial in hex (2A), carol's in
		// decimal; erin's serial (77, 4D) is not in the map.
		{"cn=cert-42,ou=certs," + sfx, map[string][]string{"objectClass": {"account", "extensibleObject"}, "cn": {"cert-42"}, "uid": {"dave"},
			"description": {ca.Subject.String()}, "serialNumber": {"2A"}}},
		{"cn=cert-1001,ou=certs," + sfx, map[string][]string{"objectClass": {"account", "extensibleObject"}, "cn": {"cert-1001"}, "uid": {"carol"},
			"description": {ca.Subject.String()}, "serialNumber": {"1001"}}},
		{"cn=cert-77,ou=certs," + sfx, map[string][]string{"objectClass": {"account", "extensibleObject"}, "cn": {"cert-77"}, "uid": {"erin"},
			"description": {ca.Subject.String()}, "serialNumber": {"4E"}}},
	} {
		if err := authntest.AddEntry(sd.Addr, e.dn, e.attrs); err != nil {
			t.Fatalf("%s: %v", e.dn, err)
		}
	}
	if err := authntest.AddValues(sd.Addr, "uid=carol,ou=people,"+sfx, "employeeType", "cn=operators,ou=roles,"+sfx); err != nil {
		t.Fatal(err)
	}
	if err := authntest.AddValues(sd.Addr, "uid=dave,ou=people,"+sfx, "employeeType", "auditor"); err != nil {
		t.Fatal(err)
	}
	if err := authntest.AddValues(sd.Addr, "uid=erin,ou=people,"+sfx, "employeeType", "operators"); err != nil {
		t.Fatal(err)
	}
	base := authn.SSLCCLDAP{Servers: []string{sd.Addr}, AdminDN: authntest.RootDN, AdminPW: authntest.RootPW, SearchType: "certmap",
		CertmapBase: "ou=issuers," + sfx, CertmapKey: "description",
		UserBase: "ou=people," + sfx, UserClass: "inetOrgPerson", UserKey: "uid", Timeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		serial bool
		roles  []string
		groups bool
		cert   *x509.Certificate
		want   authn.Status
		user   string
	}{
		{"issuer mapped", false, nil, false, carol, authn.Success, "carol"},
		{"issuer not mapped", false, nil, false, stray, authn.Failure, ""},
		{"issuer mapped, subject an unknown user", false, nil, false, dave, authn.Failure, ""},
		{"serial in hex", true, nil, false, dave, authn.Success, "dave"},
		{"serial in decimal", true, nil, false, carol, authn.Success, "carol"},
		{"serial of another issuer", true, nil, false, stray, authn.Failure, ""},
		{"serial not mapped", true, nil, false, erin, authn.Failure, ""},
		{"valid role as a DN", true, []string{"operators"}, false, carol, authn.Success, "carol"},
		{"valid role as a value", true, []string{"operators", "auditor"}, false, dave, authn.Success, "dave"},
		{"no valid role", true, []string{"operators"}, false, dave, authn.Failure, ""},
		{"valid role, valid group", true, []string{"auditor"}, true, dave, authn.Success, "dave"},
		{"valid role, no valid group", false, []string{"operators"}, true, erin, authn.Failure, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := base
			if c.serial {
				l.CertmapUserSerial, l.CertmapBase = true, "ou=certs,"+sfx
			}
			l.RoleKey, l.ValidRoles = "employeeType", c.roles
			if c.groups {
				l.GroupBase, l.GroupKey, l.GroupMemberKey, l.ValidGroups = "ou=groups,"+sfx, "cn", "member", []string{"staff"}
			}
			res := l.Authenticate(ctx(t), authn.Request{Cert: c.cert})
			if res.Status != c.want {
				t.Fatalf("%v (%v), want %v", res.Status, res.Err, c.want)
			}
			if c.user != "" && (len(res.Data) == 0 || res.Data[0].Value != c.user) {
				t.Fatalf("data %v, want user %s", res.Data, c.user)
			}
			if c.want == authn.Success && c.roles != nil && !slices.ContainsFunc(res.Data, func(a authn.Attr) bool { return a.Name == "ssl_cc_ldap:role" }) {
				t.Errorf("data %v: no role", res.Data)
			}
		})
	}
}
