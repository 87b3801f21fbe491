package authn_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
	"golang.org/x/crypto/ocsp"

	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/dataplane/authn/authntest"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestLDAP binds users against a real slapd: search as bind-dn, bind as
// the entry found, group membership; a server that is down is skipped.
func TestLDAP(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	sd, err := authntest.StartSlapd(t.TempDir(), "127.141.20.20:3890")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	base := &authn.LDAP{Servers: []string{"127.141.20.99", "127.141.20.20"}, Port: 3890, BaseDN: "ou=people," + authntest.Suffix,
		Scope: ldap.ScopeWholeSubtree, BindDN: authntest.RootDN, BindPW: authntest.RootPW, BindTimeout: 2 * time.Second}
	group := *base
	group.GroupDN = "cn=staff,ou=groups," + authntest.Suffix
	tmpl := &authn.LDAP{Servers: []string{"127.141.20.20"}, Port: 3890, UserTemplate: "uid=%s,ou=people," + authntest.Suffix}
	down := &authn.LDAP{Servers: []string{"127.141.20.99"}, Port: 3890, BaseDN: authntest.Suffix, BindTimeout: time.Second}
	for _, c := range []struct {
		name string
		l    *authn.LDAP
		user string
		pass string
		want authn.Status
	}{
		{"good", base, "carol", "ldappw", authn.Success},
		{"bad password", base, "carol", "nope", authn.Failure},
		{"unknown user", base, "zed", "x", authn.Failure},
		{"empty password", base, "carol", "", authn.Failure},
		{"filter characters", base, "*", "x", authn.Failure},
		{"in the group", &group, "dave", "davepw", authn.Success},
		{"outside the group", &group, "erin", "erinpw", authn.Failure},
		{"user-template", tmpl, "erin", "erinpw", authn.Success},
		{"user-template, bad password", tmpl, "erin", "x", authn.Failure},
		{"no server answers", down, "carol", "ldappw", authn.Error},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.l.Authenticate(ctx(t), authn.Request{Username: c.user, Password: c.pass})
			if r.Status != c.want {
				t.Fatalf("%v (%v), want %v", r.Status, r.Err, c.want)
			}
			if r.Status == authn.Success && c.l.BaseDN != "" {
				found := false
				for _, a := range r.Data {
					found = found || a.Name == "ldap:attr:mail" && a.Value == c.user+"@example.com"
				}
				if !found {
					t.Errorf("no mail in %v", r.Data)
				}
			}
		})
	}
}

// TestRADIUS sends Access-Requests: accept, reject, a challenge answered
// with its State, a server that does not answer before the next.
func TestRADIUS(t *testing.T) {
	rs, err := authntest.StartRADIUS("127.141.20.21:1812", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	good := authn.RADIUSServer{Addr: "127.141.20.21:1812", Secret: []byte("s3cret"), Timeout: 2 * time.Second}
	silent := authn.RADIUSServer{Addr: "127.141.20.22:1812", Secret: []byte("s3cret"), Timeout: 500 * time.Millisecond}
	r := &authn.RADIUS{Servers: []authn.RADIUSServer{silent, good}, Retries: 1, ClientID: "openltm"}
	if res := r.Authenticate(ctx(t), authn.Request{Username: "alice", Password: "wonder"}); res.Status != authn.Success {
		t.Fatalf("alice: %v %v", res.Status, res.Err)
	}
	if res := r.Authenticate(ctx(t), authn.Request{Username: "alice", Password: "x"}); res.Status != authn.Failure {
		t.Fatalf("bad password: %v", res.Status)
	}
	res := r.Authenticate(ctx(t), authn.Request{Username: "bob", Password: "x"})
	if res.Status != authn.WantCredential || res.Prompt != "Enter the PIN" || string(res.State) != "chal" {
		t.Fatalf("challenge: %+v", res)
	}
	if res := r.Authenticate(ctx(t), authn.Request{Username: "bob", Password: "1234", State: res.State}); res.Status != authn.Success {
		t.Fatalf("answer to the challenge: %v %v", res.Status, res.Err)
	}
	wrong := &authn.RADIUS{Servers: []authn.RADIUSServer{{Addr: good.Addr, Secret: []byte("other"), Timeout: 500 * time.Millisecond}}, Retries: 1}
	if res := wrong.Authenticate(ctx(t), authn.Request{Username: "alice", Password: "wonder"}); res.Status != authn.Error {
		t.Fatalf("wrong secret: %v", res.Status)
	}
}

// counting answers Success and counts the questions.
type counting struct{ n int }

func (c *counting) Authenticate(ctx context.Context, r authn.Request) authn.Result {
	c.n++
	if r.Password == "good" {
		return authn.Result{Status: authn.Success}
	}
	return authn.Result{Status: authn.Failure}
}

// TestProfileRemembers: a success is remembered for the idle timeout,
// a failure never; the counters count every answer.
func TestProfileRemembers(t *testing.T) {
	b := &counting{}
	p := authn.NewProfile("/Common/p", "ldap", b, time.Minute, nil)
	for i := 0; i < 3; i++ {
		p.Authenticate(ctx(t), authn.Request{Username: "u", Password: "good"})
		p.Authenticate(ctx(t), authn.Request{Username: "u", Password: "bad"})
	}
	if b.n != 4 {
		t.Fatalf("the back end was asked %d times, want 4", b.n)
	}
	st := p.Stats()
	if st.Total != 6 || st.Success != 3 || st.Failure != 3 || st.CacheHits != 2 {
		t.Fatalf("stats %+v", st)
	}
	q := authn.NewProfile("/Common/p", "ldap", b, 0, p)
	q.Authenticate(ctx(t), authn.Request{Username: "u", Password: "good"})
	if b.n != 5 || q.Stats().Total != 7 {
		t.Fatalf("idle-timeout 0 remembers nothing; counters go on: %d %+v", b.n, q.Stats())
	}
}

// TestOCSP asks a responder (Go's, signing with the CA) about a good,
// a revoked and an unknown certificate, with the issuer found in
// ca-file.
func TestOCSP(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64) *x509.Certificate {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, _ := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		c, _ := x509.ParseCertificate(der)
		return c
	}
	ln, err := net.Listen("tcp", "127.141.20.23:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := ocsp.ParseRequest(body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		st := ocsp.Good
		switch req.SerialNumber.Int64() {
		case 3:
			st = ocsp.Revoked
		case 4:
			st = ocsp.Unknown
		}
		der, _ := ocsp.CreateResponse(ca, ca, ocsp.Response{Status: st, SerialNumber: req.SerialNumber, ThisUpdate: time.Now().Add(-time.Minute),
			NextUpdate: time.Now().Add(time.Hour), RevokedAt: time.Now().Add(-time.Hour)}, caKey)
		w.Write(der)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	resp := &authn.OCSPResponder{Name: "r", URL: "http://" + ln.Addr().String(), CAs: []*x509.Certificate{ca}, VerifySig: true}
	o := &authn.SSLOCSP{Responders: []*authn.OCSPResponder{resp}, MaxTimeout: 10 * time.Second}
	for _, c := range []struct {
		serial int64
		want   authn.Status
	}{{2, authn.Success}, {3, authn.Failure}, {4, authn.Failure}} {
		if r := o.Authenticate(ctx(t), authn.Request{Cert: leaf(c.serial)}); r.Status != c.want {
			t.Errorf("serial %d: %v %v, want %v", c.serial, r.Status, r.Err, c.want)
		}
	}
	down := &authn.SSLOCSP{Responders: []*authn.OCSPResponder{{Name: "down", URL: "http://127.141.20.24:9/", CAs: []*x509.Certificate{ca}, VerifySig: true}}, MaxTimeout: 5 * time.Second}
	if r := down.Authenticate(ctx(t), authn.Request{Cert: leaf(2)}); r.Status != authn.Error || !strings.Contains(r.Err.Error(), "ocsp-responder down") {
		t.Errorf("responder down: %v %v", r.Status, r.Err)
	}
	if r := o.Authenticate(ctx(t), authn.Request{}); r.Status != authn.Failure {
		t.Errorf("no certificate: %v", r.Status)
	}
}

// TestCRLDP reads a client certificate's CRL distribution point over
// http, checks the CRL's signature with the issuer the client sent,
// and finds the revoked serial; a CRL signed by another key is no
// answer.
func TestCRLDP(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	ln, err := net.Listen("tcp", "127.141.20.25:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Minute), NextUpdate: time.Now().Add(time.Hour),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: big.NewInt(3), RevocationTime: time.Now().Add(-time.Hour)}}}, ca, caKey)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &otherKey.PublicKey, otherKey)
	other, _ := x509.ParseCertificate(otherDER)
	forged, _ := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Minute), NextUpdate: time.Now().Add(time.Hour)}, other, otherKey)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/forged.crl" {
			w.Write(forged)
			return
		}
		w.Write(crl)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	leaf := func(serial int64, point string) *x509.Certificate {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			CRLDistributionPoints: []string{base + point}}
		der, _ := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		c, _ := x509.ParseCertificate(der)
		return c
	}
	d := &authn.SSLCRLDP{CacheTimeout: time.Minute, ConnectTimeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		cert   *x509.Certificate
		issuer *x509.Certificate
		want   authn.Status
	}{
		{"not revoked", leaf(2, "/ca.crl"), ca, authn.Success},
		{"revoked", leaf(3, "/ca.crl"), ca, authn.Failure},
		{"CRL signed by another key", leaf(2, "/forged.crl"), ca, authn.Error},
		{"no issuer", leaf(2, "/ca.crl"), nil, authn.Error},
	} {
		if r := d.Authenticate(ctx(t), authn.Request{Cert: c.cert, Issuer: c.issuer}); r.Status != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, r.Status, r.Err, c.want)
		}
	}
}
