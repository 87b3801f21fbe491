package tlsprof

import (
	"crypto/tls"
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

// TestMemberOCSPResponses: what a show lists for a server-ssl profile
// with ocsp: one answer per member certificate its handshakes checked
// (good and revoked, sorted by subject), with the validator, responder,
// status and dates; nothing before a handshake, nothing for a profile
// without ocsp; a profile built again at a commit with the same
// validator lists the same answers; one whose validator changed lists
// none until its members are checked again.
func TestMemberOCSPResponses(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	revoked := p.server(t, "revoked", "R")
	r := p.responder(t, "127.248.2.1:0")
	ca := &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	member := func(ck CertKeyChain) string {
		c, err := Pair("m", ck.Cert, ck.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return serveAt(t, "127.248.2.1:0", &tls.Config{Certificates: []tls.Certificate{c}})
	}
	goodAt, revokedAt := member(good), member(revoked)
	o := &OCSP{Name: "/Common/vmember", ResponderURL: r.URL(), Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
	build := func(o *OCSP) *Built {
		b, err := (&ServerSSL{Name: "/Common/ss", OCSP: o, CAFile: ca, RevokedControl: ControlIgnore}).Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := build(o)
	if rs := b.MemberOCSPResponses(); len(rs) != 0 {
		t.Fatalf("before any handshake: %+v", rs)
	}
	before := time.Now()
	for _, at := range []string{revokedAt, goodAt} {
		if _, err := dial(at, b.Config); err != nil {
			t.Fatalf("%s: %v", at, err)
		}
	}
	rs := b.MemberOCSPResponses()
	if len(rs) != 2 {
		t.Fatalf("%d responses, want 2: %+v", len(rs), rs)
	}
	for i, want := range []struct{ cn, status string }{{"good", OCSPGood}, {"revoked", OCSPRevoked}} {
		g := rs[i]
		if g.Cert != "" || !strings.Contains(g.Subject, "CN="+want.cn+".example.test") || g.Serial == "" || g.Validator != "cert-validator /Common/vmember" ||
			g.Responder != r.URL() || g.Status != want.status || g.Err != "" {
			t.Fatalf("%s: %+v", want.cn, g)
		}
		if g.Fetched.Before(before) || g.ThisUpdate.IsZero() || !g.Renew.After(g.Fetched) || !g.Expires.After(g.Renew) {
			t.Fatalf("%s: dates out of order: %+v", want.cn, g)
		}
	}
	if rs := build(&OCSP{Name: o.Name, ResponderURL: o.ResponderURL, Timeout: o.Timeout, CacheErrorTimeout: o.CacheErrorTimeout}).MemberOCSPResponses(); len(rs) != 2 {
		t.Fatalf("built again, same validator: %+v", rs)
	}
	if rs := build(&OCSP{Name: o.Name, ResponderURL: o.ResponderURL, Timeout: o.Timeout, CacheErrorTimeout: 2 * time.Hour}).MemberOCSPResponses(); len(rs) != 0 {
		t.Fatalf("validator changed: %+v", rs)
	}
	plain, err := (&ServerSSL{Name: "/Common/plain", CAFile: ca}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if rs := plain.MemberOCSPResponses(); rs != nil {
		t.Fatalf("no ocsp: %+v", rs)
	}
}
