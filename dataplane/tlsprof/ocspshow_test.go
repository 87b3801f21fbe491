package tlsprof

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

// TestOCSPResponses: what a show lists for a stapling profile: the
// certificate, its validator and responder, and the answer's status and
// dates (this update, when it came, renewed before it expires); for a
// responder that is down, no status and the error; for a profile without
// stapling, nothing.
func TestOCSPResponses(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.245.2.1:0")
	ck := good
	ck.Issuer = &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	ck.OCSP = &OCSP{Name: "/Common/v", ResponderURL: r.URL(), Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
	before := time.Now()
	b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if !b.WaitOCSP(10 * time.Second) {
		t.Fatal("no answer from the responder within 10s")
	}
	rs := b.OCSPResponses()
	if len(rs) != 1 {
		t.Fatalf("%d responses, want 1", len(rs))
	}
	g := rs[0]
	if g.Cert != ck.Cert.Name || !strings.Contains(g.Subject, "good") || g.Serial == "" || g.Validator != "cert-validator /Common/v" ||
		g.Responder != r.URL() || g.Status != OCSPGood || g.Err != "" {
		t.Fatalf("good: %+v", g)
	}
	if g.Fetched.Before(before) || g.ThisUpdate.IsZero() || g.ThisUpdate.After(g.Fetched.Add(time.Minute)) ||
		!g.Renew.After(g.Fetched) || !g.Expires.After(g.Renew) || (!g.NextUpdate.IsZero() && !g.NextUpdate.After(g.ThisUpdate)) {
		t.Fatalf("good: dates out of order: %+v", g)
	}

	ck.OCSP = &OCSP{Name: "/Common/down", ResponderURL: "http://" + closedAddr(t, "127.245.2.1"), Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
	b, err = (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	b.WaitOCSP(10 * time.Second)
	rs = b.OCSPResponses()
	if len(rs) != 1 || rs[0].Status != "" || !rs[0].Fetched.IsZero() || rs[0].Responder != ck.OCSP.ResponderURL ||
		!strings.HasPrefix(rs[0].Err, "cert-validator /Common/down: responder ") {
		t.Fatalf("down: %+v", rs)
	}

	b, err = (&ClientSSL{Name: "/Common/plain", CertKeyChain: []CertKeyChain{good}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if rs := b.OCSPResponses(); rs != nil {
		t.Fatalf("no stapling: %+v", rs)
	}
}
