package tlsprof

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
	"golang.org/x/crypto/ocsp"
)

// ocspPKI is a CA, its OCSP signer and an OpenSSL responder index, for
// tests against `openssl ocsp`.
type ocspPKI struct {
	dir            string
	ca             *x509.Certificate
	caKey          crypto.Signer
	caFile, caPath string
	index          []string
	serial         int64
}

func newOCSPPKI(t *testing.T) *ocspPKI {
	t.Helper()
	if err := ocsptest.Available(); err != nil {
		t.Skipf("OCSP tests need openssl ocsp as the responder: %v", err)
	}
	p := &ocspPKI{dir: t.TempDir(), serial: 100}
	p.ca, p.caKey, p.caPath = p.issue(t, "ca", "OCSP test CA", nil, true)
	p.caFile = p.caPath
	return p
}

// issue writes a certificate and its key (name.crt, name.key). aia, when
// set, is the responder the certificate names.
func (p *ocspPKI) issue(t *testing.T, file, cn string, ext []x509.ExtKeyUsage, ca bool, aia ...string) (*x509.Certificate, crypto.Signer, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour), BasicConstraintsValid: true, IsCA: ca,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: ext, OCSPServer: aia}
	parent, pkey := p.ca, p.caKey
	if ca {
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
		tmpl.DNSNames = nil
		parent, pkey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), pkey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	path := filepath.Join(p.dir, file+".crt")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(p.dir, file+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	return c, key, path
}

// server issues a server certificate listed in the index as status
// ("V", "R", or "" for not listed: unknown).
func (p *ocspPKI) server(t *testing.T, file, status string, aia ...string) CertKeyChain {
	t.Helper()
	c, _, path := p.issue(t, file, file+".example.test", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, false, aia...)
	exp := c.NotAfter.UTC().Format("060102150405Z")
	switch status {
	case "V":
		p.index = append(p.index, fmt.Sprintf("V\t%s\t\t%X\tunknown\t/CN=%s", exp, c.SerialNumber, c.Subject.CommonName))
	case "R":
		p.index = append(p.index, fmt.Sprintf("R\t%s\t%s\t%X\tunknown\t/CN=%s", exp, time.Now().UTC().Format("060102150405Z"), c.SerialNumber, c.Subject.CommonName))
	}
	cert, err := LoadCert("/Common/"+file+".crt", path)
	if err != nil {
		t.Fatal(err)
	}
	key, err := LoadKey("/Common/"+file+".key", filepath.Join(p.dir, file+".key"), "")
	if err != nil {
		t.Fatal(err)
	}
	return CertKeyChain{Name: file, Cert: cert, Key: key}
}

// responder starts openssl's responder at addr over the index so far,
// signing with a delegated OCSP signer.
func (p *ocspPKI) responder(t *testing.T, addr string) *ocsptest.Responder {
	t.Helper()
	_, _, signer := p.issue(t, "ocsp-signer", "OCSP signer", []x509.ExtKeyUsage{x509.ExtKeyUsageOCSPSigning}, false)
	idx := filepath.Join(p.dir, "index.txt")
	if err := os.WriteFile(idx, []byte(strings.Join(p.index, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &ocsptest.Responder{Index: idx, CA: p.caPath, Signer: signer, SignerKey: filepath.Join(p.dir, "ocsp-signer.key"), Minutes: 10}
	if err := r.Start(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T, host string) string {
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// TestOCSPStapling: a client-ssl profile with ocsp-stapling staples what
// openssl's responder says of its certificate (good, revoked, unknown),
// asked at the validator's responder-url or the certificate's own
// responder; a responder that is down leaves the handshake without a
// staple. A Go client reads the staple.
func TestOCSPStapling(t *testing.T) {
	p := newOCSPPKI(t)
	down := "http://" + closedAddr(t, "127.13.1.2")
	good := p.server(t, "good", "V")
	revoked := p.server(t, "revoked", "R")
	unknown := p.server(t, "unknown", "")
	// The responder's address is known only once it listens: the AIA
	// certificate is issued for a fixed address.
	aiaAddr := closedAddr(t, "127.13.1.1")
	aia := p.server(t, "aia", "V", "http://"+aiaAddr)
	r := p.responder(t, aiaAddr)
	ca := &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	for _, tc := range []struct {
		name   string
		ck     CertKeyChain
		url    string // "" = the certificate's
		status int    // ocsp.Good, ... ; -1 = no staple
	}{
		{"good", good, r.URL(), ocsp.Good},
		{"revoked", revoked, r.URL(), ocsp.Revoked},
		{"unknown to the responder", unknown, r.URL(), ocsp.Unknown},
		{"responder from the certificate", aia, "", ocsp.Good},
		{"responder down", good, down, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ck := tc.ck
			ck.OCSP = &OCSP{Name: "/Common/v-" + strings.ReplaceAll(tc.name, " ", "-"), ResponderURL: tc.url, Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
			ck.Issuer = ca
			b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, OCSPStapling: true}).Build()
			if err != nil {
				t.Fatal(err)
			}
			if !b.WaitOCSP(10 * time.Second) {
				t.Fatal("no answer from the responder within 10s")
			}
			addr := serveAt(t, "127.13.1.1:0", b.Config)
			cs, err := dial(addr, &tls.Config{InsecureSkipVerify: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.status < 0 {
				if len(cs.OCSPResponse) != 0 {
					t.Fatalf("stapled %d bytes with the responder down", len(cs.OCSPResponse))
				}
				if _, err := b.OCSPStatus(0); err == nil || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("status error = %v, want the connection's refusal", err)
				}
				return
			}
			resp, err := ocsp.ParseResponseForCert(cs.OCSPResponse, ck.Cert.Certs[0], p.ca)
			if err != nil {
				t.Fatalf("staple: %v (%d bytes)", err, len(cs.OCSPResponse))
			}
			if resp.Status != tc.status {
				t.Fatalf("stapled status %d, want %d", resp.Status, tc.status)
			}
		})
	}
}

// TestOCSPStaplingRefused: ocsp-stapling without a validator on any
// certificate, or without the issuer, is refused with the reason.
func TestOCSPStaplingRefused(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	other := newOCSPPKI(t)
	for _, tc := range []struct {
		name string
		ck   CertKeyChain
		err  string
	}{
		{"no validator", good, "no certificate of its cert-key-chain has an OCSP cert-validator"},
		{"no issuer", func() CertKeyChain { c := good; c.OCSP = &OCSP{Name: "/Common/v"}; return c }(), "needs its issuer"},
		{"another issuer", func() CertKeyChain {
			c := good
			c.OCSP = &OCSP{Name: "/Common/v"}
			c.Issuer = &Cert{Name: "/Common/other.crt", Certs: []*x509.Certificate{other.ca}}
			return c
		}(), "did not sign it"},
	} {
		_, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{tc.ck}, OCSPStapling: true}).Build()
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestServerSSLOCSP: a server-ssl profile with an OCSP validator asks
// openssl's responder about each member's certificate: revoked drops
// the handshake unless revoked-cert-status-response-control ignore; an
// unknown status or no answer drops it only with
// unknown-cert-status-response-control drop. Answers are cached.
func TestServerSSLOCSP(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	revoked := p.server(t, "revoked", "R")
	unknown := p.server(t, "unknown", "")
	r := p.responder(t, "127.13.2.1:0")
	down := "http://" + closedAddr(t, "127.13.2.2")
	ca := &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	member := func(ck CertKeyChain) string {
		c, err := Pair("m", ck.Cert, ck.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return serveAt(t, "127.13.2.1:0", &tls.Config{Certificates: []tls.Certificate{c}})
	}
	goodAt, revokedAt, unknownAt := member(good), member(revoked), member(unknown)
	for _, tc := range []struct {
		name             string
		at, url          string
		revoked, unknown string // controls
		mode             string
		err              string // "" = connected
	}{
		{name: "good", at: goodAt, url: r.URL()},
		{name: "good, peer-cert-mode require", at: goodAt, url: r.URL(), mode: "require"},
		{name: "revoked", at: revokedAt, url: r.URL(), err: "is revoked (OCSP"},
		{name: "revoked, peer-cert-mode require", at: revokedAt, url: r.URL(), mode: "require", err: "is revoked (OCSP"},
		{name: "revoked, ignored", at: revokedAt, url: r.URL(), revoked: ControlIgnore},
		{name: "unknown", at: unknownAt, url: r.URL()},
		{name: "unknown, dropped", at: unknownAt, url: r.URL(), unknown: ControlDrop, err: "OCSP status unknown"},
		{name: "responder down", at: revokedAt, url: down},
		{name: "responder down, dropped", at: goodAt, url: down, unknown: ControlDrop, err: "no OCSP status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &OCSP{Name: "/Common/v-" + strings.ReplaceAll(tc.name, " ", "-"), ResponderURL: tc.url, Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
			b, err := (&ServerSSL{Name: "/Common/ss", OCSP: o, CAFile: ca, PeerCertMode: tc.mode, RevokedControl: tc.revoked, UnknownControl: tc.unknown}).Build()
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 { // the second handshake reads the cache
				before := r.Requests()
				_, err = dial(tc.at, b.Config)
				if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Fatalf("handshake %d: err = %v, want %q", i+1, err, tc.err)
				}
				if i == 1 && r.Requests() != before {
					t.Fatalf("the second handshake asked the responder again")
				}
			}
		})
	}
}

// TestOCSPAnswerLifetime: an answer is used until its next-update or the
// validator's cache-timeout, whichever is first, and asked again half-way;
// a failure is remembered for cache-error-timeout.
func TestOCSPAnswerLifetime(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.13.3.1:0") // next-update in 10 minutes
	leaf := good.Cert.Certs[0]
	now := time.Now()
	for _, tc := range []struct {
		name      string
		cache     time.Duration
		wantLife  time.Duration
		tolerance time.Duration
	}{
		{"next-update", 0, 10 * time.Minute, time.Minute},
		{"cache-timeout shorter", 2 * time.Minute, 2 * time.Minute, time.Second},
		{"cache-timeout longer", time.Hour, 10 * time.Minute, time.Minute},
	} {
		now := time.Now()
		o := &OCSP{Name: "/Common/v", ResponderURL: r.URL(), CacheTimeout: tc.cache, Timeout: 3 * time.Second, ClockSkew: 5 * time.Second}
		a := o.fetch(t.Context(), leaf, p.ca, func() time.Time { return now })
		if a.err != nil {
			t.Fatalf("%s: %v", tc.name, a.err)
		}
		// The responder dates its answer when it makes it, after now, in
		// whole seconds: next-update may be later than now + 10 minutes
		// by the exchange's length and a second.
		over := time.Since(now) + time.Second
		if tc.cache > 0 && tc.cache < tc.wantLife {
			over = 0 // the validator's own limit, from now exactly
		}
		life := a.expires.Sub(now)
		if life > tc.wantLife+over || life < tc.wantLife-tc.tolerance {
			t.Errorf("%s: used for %v, want %v", tc.name, life, tc.wantLife)
		}
		if got := a.refresh.Sub(now); got != life/2 {
			t.Errorf("%s: asked again after %v, want %v", tc.name, got, life/2)
		}
	}
	o := &OCSP{Name: "/Common/v", ResponderURL: "http://" + closedAddr(t, "127.13.3.2"), CacheErrorTimeout: 5 * time.Minute}
	a := o.fetch(t.Context(), leaf, p.ca, func() time.Time { return now })
	if a.err == nil || a.refresh.Sub(now) != 5*time.Minute || a.der != nil {
		t.Fatalf("failed exchange: err %v, asked again after %v", a.err, a.refresh.Sub(now))
	}
}

// TestOCSPRefreshAhead: an answer in use is asked again ahead of its
// expiry without waiting for a handshake to find it out of date, and
// the next handshakes staple the new one.
func TestOCSPRefreshAhead(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.13.4.1:0")
	good.OCSP = &OCSP{Name: "/Common/refresh", ResponderURL: r.URL(), CacheTimeout: 2 * time.Second, Timeout: 3 * time.Second}
	good.Issuer = &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{good}, OCSPStapling: true}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if !b.WaitOCSP(10 * time.Second) {
		t.Fatal("no answer within 10s")
	}
	addr := serveAt(t, "127.13.4.1:0", b.Config)
	first, err := dial(addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil || len(first.OCSPResponse) == 0 {
		t.Fatalf("first handshake: %v, %d bytes stapled", err, len(first.OCSPResponse))
	}
	for i := 0; r.Requests() < 2; i++ {
		if i == 100 {
			t.Fatalf("the responder was asked %d times in 10s; the answer (cache-timeout 2s) was not renewed", r.Requests())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; ; i++ {
		cs, err := dial(addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.OCSPResponse) > 0 && !bytes.Equal(cs.OCSPResponse, first.OCSPResponse) {
			break
		}
		if i == 50 {
			t.Fatal("the renewed answer was not stapled")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOCSPValidatorChecks: status-age refuses an answer whose
// this-update is older than it (openssl's answers are made at the ask;
// the check runs at a later clock); strict-resp-cert-check requires a
// trusted responder's certificate to be marked for OCSP signing, which an
// issuer's delegated responder always must be.
func TestOCSPValidatorChecks(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	leaf := good.Cert.Certs[0]
	delegated := p.responder(t, "127.13.5.1:0")
	// A responder whose certificate the CA issued for servers, not for
	// OCSP signing.
	plainCert, _, plainPath := p.issue(t, "plain-signer", "plain signer", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, false)
	plain := &ocsptest.Responder{Index: filepath.Join(p.dir, "index.txt"), CA: p.caPath, Signer: plainPath,
		SignerKey: filepath.Join(p.dir, "plain-signer.key"), Minutes: 10}
	if err := plain.Start("127.13.5.2:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	trusted := &Cert{Name: "/Common/plain-signer.crt", Certs: []*x509.Certificate{plainCert}}
	for _, tc := range []struct {
		name    string
		url     string
		o       OCSP
		later   time.Duration // the clock the answer is checked at, ahead of now
		wantErr string
	}{
		{"status-age 0: any age", delegated.URL(), OCSP{}, 5 * time.Minute, ""},
		{"within status-age", delegated.URL(), OCSP{StatusAge: 10 * time.Minute}, 5 * time.Minute, ""},
		{"past status-age", delegated.URL(), OCSP{StatusAge: time.Minute}, 5 * time.Minute, "past status-age 60 s"},
		{"within status-age by clock-skew", delegated.URL(), OCSP{StatusAge: 4 * time.Minute, ClockSkew: 2 * time.Minute}, 5 * time.Minute, ""},
		{"delegated without OCSP signing", plain.URL(), OCSP{}, 0, "not for OCSP signing"},
		{"trusted responder, not strict", plain.URL(), OCSP{TrustedResponders: trusted}, 0, ""},
		{"trusted responder, strict-resp-cert-check", plain.URL(), OCSP{TrustedResponders: trusted, StrictRespCertCheck: true}, 0, "not for OCSP signing"},
		{"delegated for OCSP signing, strict-resp-cert-check", delegated.URL(), OCSP{StrictRespCertCheck: true}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Name, o.ResponderURL, o.Timeout = "/Common/v", tc.url, 5*time.Second
			a := o.fetch(t.Context(), leaf, p.ca, func() time.Time { return time.Now().Add(tc.later) })
			switch {
			case tc.wantErr == "" && a.err != nil:
				t.Fatalf("refused: %v", a.err)
			case tc.wantErr != "" && (a.err == nil || !strings.Contains(a.err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want %q", a.err, tc.wantErr)
			case tc.wantErr == "" && a.status != OCSPGood:
				t.Fatalf("status %q", a.status)
			}
		})
	}
}

// TestOCSPConcurrentLimit: concurrent-connections-limit bounds the
// exchanges a validator has with its responder at once; the others wait
// for a place and are answered too.
func TestOCSPConcurrentLimit(t *testing.T) {
	p := newOCSPPKI(t)
	var leaves []*x509.Certificate
	for i := range 4 {
		leaves = append(leaves, p.server(t, fmt.Sprintf("s%d", i), "V").Cert.Certs[0])
	}
	for i, limit := range []int{1, 2} {
		r := p.responder(t, fmt.Sprintf("127.13.6.%d:0", i+1))
		r.Hold = 200 * time.Millisecond
		o := &OCSP{Name: fmt.Sprintf("/Common/limited%d", limit), ResponderURL: r.URL(), Timeout: 10 * time.Second, ConcurrentLimit: limit}
		errs := make(chan error, len(leaves))
		for _, leaf := range leaves {
			go func() {
				a := o.fetch(t.Context(), leaf, p.ca, time.Now)
				if a.err == nil && a.status != OCSPGood {
					a.err = fmt.Errorf("status %q", a.status)
				}
				errs <- a.err
			}()
		}
		for range leaves {
			if err := <-errs; err != nil {
				t.Fatalf("limit %d: %v", limit, err)
			}
		}
		if got := r.MaxInFlight(); got > int64(limit) || got < 1 {
			t.Errorf("limit %d: the responder held %d requests at once", limit, got)
		}
	}
}

// TestOCSPDNSResolver: a validator with a dns-resolver finds its
// responder's host through the resolver's nameserver (a name the
// system's resolver does not know); without it, or with a resolver that
// does not know the name, the exchange fails.
func TestOCSPDNSResolver(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.13.8.1:0")
	_, port, _ := net.SplitHostPort(r.Addr())
	pc, err := net.ListenPacket("udp", "127.13.8.53:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if q.Question[0].Name == "ocsp.openltm.test." && q.Question[0].Qtype == dns.TypeA {
			rr, _ := dns.NewRR("ocsp.openltm.test. 60 IN A 127.13.8.1")
			m.Answer = append(m.Answer, rr)
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	ns := netip.MustParseAddrPort(pc.LocalAddr().String())
	res := &zoneResolver{name: "/Common/r", zone: ".", ns: ns}
	other := &zoneResolver{name: "/Common/other", zone: "example.", ns: ns}
	for _, tc := range []struct {
		name    string
		res     Resolver
		wantErr string
	}{
		{"through the dns-resolver", res, ""},
		{"a resolver without the zone", other, "dns-resolver"},
		{"the system's resolver", nil, "ocsp.openltm.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &OCSP{Name: "/Common/v", ResponderURL: "http://ocsp.openltm.test:" + port, Timeout: 3 * time.Second, Resolver: tc.res, ResolverName: "/Common/r"}
			a := o.fetch(t.Context(), good.Cert.Certs[0], p.ca, time.Now)
			if tc.wantErr == "" {
				if a.err != nil || a.status != OCSPGood {
					t.Fatalf("status %q, err %v", a.status, a.err)
				}
				return
			}
			if a.err == nil || !strings.Contains(a.err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", a.err, tc.wantErr)
			}
		})
	}
}

// zoneResolver is a net dns-resolver with one forward zone, as the
// validator sees one (the daemon hands it fwdproxy's, which imports this
// package's users): names under zone are asked of ns.
type zoneResolver struct {
	name, zone string
	ns         netip.AddrPort
}

func (z *zoneResolver) Lookup(ctx context.Context, host string, ipv6 bool) ([]netip.Addr, error) {
	fq := dns.Fqdn(host)
	if z.zone != "." && !dns.IsSubDomain(z.zone, fq) {
		return nil, fmt.Errorf("dns-resolver %s: no forward zone holds %s", z.name, host)
	}
	m := new(dns.Msg)
	m.SetQuestion(fq, dns.TypeA)
	in, _, err := new(dns.Client).ExchangeContext(ctx, m, z.ns.String())
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, rr := range in.Answer {
		if a, ok := rr.(*dns.A); ok {
			if ip, ok := netip.AddrFromSlice(a.A); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dns-resolver %s: %s has no address", z.name, host)
	}
	return out, nil
}

// TestOCSPSignedRequest: with signer-cert and signer-key the request
// names its requestor and carries a signature over its TBSRequest, with
// the signer's certificate; openssl reads it (and still answers), and
// the signature verifies with the certificate it carries.
func TestOCSPSignedRequest(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	r := p.responder(t, "127.13.9.1:0")
	for _, kind := range []string{"ecdsa", "rsa"} {
		t.Run(kind, func(t *testing.T) {
			pk := newPKI(t)
			ck := pk.chain(t, "requestor-"+kind, kind, "requestor.example")
			o := &OCSP{Name: "/Common/signed", ResponderURL: r.URL(), Timeout: 5 * time.Second, Signer: ck.Cert, SignerKey: ck.Key}
			a := o.fetch(t.Context(), good.Cert.Certs[0], p.ca, time.Now)
			if a.err != nil || a.status != OCSPGood {
				t.Fatalf("status %q, err %v", a.status, a.err)
			}
			req := r.LastRequest()
			path := filepath.Join(t.TempDir(), "req.der")
			os.WriteFile(path, req, 0o600)
			out, err := exec.Command("openssl", "ocsp", "-reqin", path, "-req_text").CombinedOutput()
			if err != nil {
				t.Fatalf("openssl ocsp -req_text: %v\n%s", err, out)
			}
			for _, want := range []string{"Requestor Name: DirName:", "requestor.example", "Signature Algorithm:"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("openssl shows no %q:\n%s", want, out)
				}
			}
			// The signature, checked with the certificate the request carries.
			var outer struct {
				TBS asn1.RawValue
				Sig struct {
					Alg   pkix.AlgorithmIdentifier
					Bits  asn1.BitString
					Certs []asn1.RawValue `asn1:"explicit,tag:0"`
				} `asn1:"explicit,tag:0"`
			}
			if _, err := asn1.Unmarshal(req, &outer); err != nil {
				t.Fatal(err)
			}
			if len(outer.Sig.Certs) != 1 {
				t.Fatalf("%d certificates in the request", len(outer.Sig.Certs))
			}
			c, err := x509.ParseCertificate(outer.Sig.Certs[0].FullBytes)
			if err != nil || !c.Equal(ck.Cert.Certs[0]) {
				t.Fatalf("the request carries another certificate: %v", err)
			}
			alg := x509.ECDSAWithSHA256
			if kind == "rsa" {
				alg = x509.SHA256WithRSA
			}
			if err := c.CheckSignature(alg, outer.TBS.FullBytes, outer.Sig.Bits.Bytes); err != nil {
				t.Fatalf("the request's signature: %v", err)
			}
		})
	}
}
