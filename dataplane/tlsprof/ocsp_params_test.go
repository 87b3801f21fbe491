package tlsprof

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

// TestOCSPParamsStapling: stapling by an ocsp-stapling-params (BIG-IP
// 11.6 to 13.0) finds the certificate's issuer in its trusted-ca when
// the entry has neither issuer-cert nor a chain holding it, refuses the
// profile naming trusted-ca when it is nowhere, and its messages name
// the parameters, not a cert-validator.
func TestOCSPParamsStapling(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.244.2.1:0")
	other := newOCSPPKI(t)
	ca := &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{other.ca, p.ca}}

	ck := good
	ck.OCSP = &OCSP{Name: "/Common/params", ResponderURL: r.URL(), Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour, Params: true}
	ck.TrustedCA = ca
	b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if !b.WaitOCSP(10 * time.Second) {
		t.Fatal("no answer from the responder within 10s")
	}
	if st, err := b.OCSPStatus(0); st != OCSPGood {
		t.Fatalf("status %q (%v), want good", st, err)
	}

	// trusted-ca without the issuer: refused, naming the parameters.
	ck.TrustedCA = &Cert{Name: "/Common/other.crt", Certs: []*x509.Certificate{other.ca}}
	_, err = (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
	if err == nil || !strings.Contains(err.Error(), "or the issuer in trusted-ca of ocsp-stapling-params /Common/params") {
		t.Fatalf("err = %v, want the issuer refused naming trusted-ca", err)
	}

	// A responder that is down: the error names the parameters.
	ck.TrustedCA = ca
	ck.OCSP = &OCSP{Name: "/Common/params_down", ResponderURL: "http://" + closedAddr(t, "127.244.2.1"), Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour, Params: true}
	b, err = (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	b.WaitOCSP(10 * time.Second)
	if _, err := b.OCSPStatus(0); err == nil || !strings.HasPrefix(err.Error(), "ocsp-stapling-params /Common/params_down: responder ") {
		t.Fatalf("status error = %v, want one naming the parameters", err)
	}
}
