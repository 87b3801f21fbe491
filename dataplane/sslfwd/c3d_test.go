package sslfwd

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// clientCert is a client certificate for cn with an e-mail SAN, the
// clientAuth usage and a private extension (1.3.6.1.4.1.311.20.2, a
// certificate template name).
func clientCert(t *testing.T, cn string) *x509.Certificate {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Client CA"), nil, nil, caKey)
	u, _ := url.Parse("urn:example:" + cn)
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: []string{"Users"}},
		EmailAddresses: []string{cn + "@example.com"}, URIs: []*url.URL{u},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2}, Value: []byte{0x1e, 0x02, 0x00, 0x55}}},
	}, ca, caKey, ecKey(t))
}

// memberSees handshakes cfg with a member that requires a client
// certificate issued by ca and returns the certificate it was shown.
func memberSees(t *testing.T, cfg *tls.Config, ca *x509.Certificate) (*x509.Certificate, error) {
	srvCert, _ := origin(t, "member", "member.example")
	ln, err := net.Listen("tcp", "127.48.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	srv := tls.Server(b, &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	done := make(chan error, 1)
	go func() {
		err := srv.Handshake()
		srv.Close()
		done <- err
	}()
	cfg = cfg.Clone()
	cfg.InsecureSkipVerify = true
	cli := tls.Client(a, cfg)
	cli.SetDeadline(time.Now().Add(5 * time.Second))
	srv.SetDeadline(time.Now().Add(5 * time.Second))
	cerr := cli.Handshake()
	if cerr == nil { // TLS 1.3: the member's verdict comes after the client's handshake
		_, cerr = cli.Read(make([]byte, 1))
	}
	if err := <-done; err != nil {
		return nil, err
	}
	if cerr != nil && !errors.Is(cerr, io.EOF) {
		return nil, cerr
	}
	return srv.ConnectionState().PeerCertificates[0], nil
}

func TestC3D(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("C3D CA"), nil, nil, caKey)
	otherKey := ecKey(t)
	other := issue(t, caTmpl("Other CA"), nil, nil, otherKey)
	alice := clientCert(t, "alice")
	fallback := clientCert(t, "anonymous")
	tmplOID := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2}
	base := &tls.Config{MinVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(8)}
	now := time.Now()
	for _, tc := range []struct {
		name     string
		c        C3DConfig
		peer     []*x509.Certificate
		trust    *x509.Certificate // the member's CA
		wantCN   string            // "" : the member refuses
		lifespan time.Duration
		check    func(t *testing.T, got *x509.Certificate)
	}{
		{name: "defaults", c: C3DConfig{}, peer: []*x509.Certificate{alice}, trust: ca, wantCN: "alice", lifespan: 24 * time.Hour,
			check: func(t *testing.T, got *x509.Certificate) {
				if !slices.Equal(got.EmailAddresses, []string{"alice@example.com"}) || len(got.URIs) != 1 {
					t.Errorf("SANs %v %v, want the client's", got.EmailAddresses, got.URIs)
				}
				if !slices.Equal(got.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || got.IsCA || !got.BasicConstraintsValid {
					t.Errorf("EKU %v CA %v, want clientAuth and CA:FALSE", got.ExtKeyUsage, got.IsCA)
				}
				for _, e := range got.Extensions {
					if e.Id.Equal(tmplOID) {
						t.Error("a custom extension copied without c3d-cert-extension-custom-oids")
					}
				}
			}},
		{name: "custom oid, no SAN, 2 hours", c: C3DConfig{Extensions: []string{ExtExtendedKeyUsage}, CustomOIDs: []asn1.ObjectIdentifier{tmplOID}, Lifespan: 2 * time.Hour},
			peer: []*x509.Certificate{alice}, trust: ca, wantCN: "alice", lifespan: 2 * time.Hour,
			check: func(t *testing.T, got *x509.Certificate) {
				if len(got.EmailAddresses) != 0 {
					t.Errorf("SAN copied though not included: %v", got.EmailAddresses)
				}
				found := false
				for _, e := range got.Extensions {
					found = found || e.Id.Equal(tmplOID) && string(e.Value) == "\x1e\x02\x00\x55"
				}
				if !found {
					t.Error("custom OID extension not copied")
				}
			}},
		{name: "fallback", c: C3DConfig{Fallback: fallback}, trust: ca, wantCN: "anonymous", lifespan: 24 * time.Hour},
		{name: "no certificate, no fallback", c: C3DConfig{}, trust: ca},
		{name: "member trusts another CA", c: C3DConfig{}, peer: []*x509.Certificate{alice}, trust: other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Name, c.CA, c.CAChain, c.CAKey = "ss", ca, []*x509.Certificate{ca}, caKey
			d, err := NewC3D(c)
			if err != nil {
				t.Fatal(err)
			}
			src := d.Source(tc.peer)
			cfg, err := d.ServerSide(base, src, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := memberSees(t, cfg, tc.trust)
			if tc.wantCN == "" {
				if err == nil {
					t.Fatalf("the member took %q", got.Subject)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject.CommonName != tc.wantCN || string(got.RawSubject) != string(src.RawSubject) {
				t.Errorf("subject %q, want the source's %q", got.Subject, src.Subject)
			}
			if string(got.RawIssuer) != string(ca.RawSubject) {
				t.Errorf("issuer %q, want the C3D CA", got.Issuer)
			}
			if life := got.NotAfter.Sub(now); life > tc.lifespan || life < tc.lifespan-time.Minute {
				t.Errorf("valid for %v from now, want %v", life, tc.lifespan)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			again, _ := d.ServerSide(base, src, nil, now)
			if again != cfg || d.Cached() != 1 {
				t.Errorf("not kept: same config %v, cached %d", again == cfg, d.Cached())
			}
			if cfg.ClientSessionCache == base.ClientSessionCache {
				t.Error("the forged configuration shares the profile's session cache")
			}
		})
	}
}

func TestC3DRefuses(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("C3D CA"), nil, nil, caKey)
	notCA := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "leaf"}}, nil, nil, caKey)
	for _, tc := range []struct {
		name string
		c    C3DConfig
		want string
	}{
		{"no ca", C3DConfig{Name: "ss"}, "needs c3d-ca-cert and c3d-ca-key"},
		{"wrong key", C3DConfig{Name: "ss", CA: ca, CAKey: ecKey(t)}, "c3d-ca-key is not the key of c3d-ca-cert"},
		{"not a ca", C3DConfig{Name: "ss", CA: notCA, CAKey: caKey}, "is not a CA certificate"},
		{"unknown extension", C3DConfig{Name: "ss", CA: ca, CAKey: caKey, Extensions: []string{"frobnicate"}}, `unknown extension "frobnicate"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewC3D(tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	for _, s := range []string{"1.3.6.1.4.1.311.20.2", "2.5.29.17"} {
		if _, err := ParseOID(s); err != nil {
			t.Errorf("ParseOID(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "1", "1.x", "3.1", "1.-2"} {
		if _, err := ParseOID(s); err == nil {
			t.Errorf("ParseOID(%q) took it", s)
		}
	}
}

func TestWithCommonName(t *testing.T) {
	k := ecKey(t)
	withCN := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "alice", Organization: []string{"Users"}}}, nil, nil, k)
	noCN := issue(t, &x509.Certificate{Subject: pkix.Name{Organization: []string{"Users"}}}, nil, nil, k)
	for _, tc := range []struct {
		name string
		src  *x509.Certificate
		cn   string
		want string
		tag  byte // the value's ASN.1 string type
	}{
		{"replaced", withCN, "svc gateway", "CN=svc gateway,O=Users", 0x13},
		{"added", noCN, "bob", "CN=bob,O=Users", 0x13},
		{"UTF-8", withCN, "zoë", "CN=zoë,O=Users", 0x0c},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WithCommonName(tc.src, tc.cn)
			if err != nil {
				t.Fatal(err)
			}
			var name pkix.RDNSequence
			if _, err := asn1.Unmarshal(got.RawSubject, &name); err != nil {
				t.Fatal(err)
			}
			if s := name.String(); s != tc.want {
				t.Errorf("subject %q, want %q", s, tc.want)
			}
			i := strings.Index(string(got.RawSubject), tc.cn)
			if i < 2 || got.RawSubject[i-2] != tc.tag {
				t.Errorf("the common name's string type is not %#x", tc.tag)
			}
			if string(tc.src.RawSubject) == string(got.RawSubject) {
				t.Error("the subject is still the source's")
			}
		})
	}
}

// TestC3DRuleForging: SSL::c3d extension, cert_lifespan and
// cert_start_date change the certificate forged for one connection (its
// extensions and validity), kept apart from the profile's; bad values
// are refused.
func TestC3DRuleForging(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("C3D CA"), nil, nil, caKey)
	alice := clientCert(t, "alice")
	upn := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}
	tmplOID := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2}
	roleDER, _ := asn1.MarshalWithParams("admin", "utf8")
	now := time.Now()
	start := now.Add(-2 * time.Hour).Truncate(time.Second)
	base := &tls.Config{}
	d, err := NewC3D(C3DConfig{Name: "ss", CA: ca, CAChain: []*x509.Certificate{ca}, CAKey: caKey, Lifespan: 24 * time.Hour,
		CustomOIDs: []asn1.ObjectIdentifier{tmplOID}})
	if err != nil {
		t.Fatal(err)
	}
	ext := func(c *x509.Certificate, id asn1.ObjectIdentifier) []byte {
		for _, e := range c.Extensions {
			if e.Id.Equal(id) {
				return e.Value
			}
		}
		return nil
	}
	for _, tc := range []struct {
		name      string
		set       func(r *C3DRule) error
		notBefore time.Time // zero: an hour before now
		lifespan  time.Duration
		exts      map[string][]byte // OID -> value
	}{
		{name: "none", set: func(*C3DRule) error { return nil }, lifespan: 24 * time.Hour, exts: map[string][]byte{tmplOID.String(): {0x1e, 0x02, 0x00, 0x55}}},
		{name: "extension", set: func(r *C3DRule) error { return r.AddExtension(upn.String(), roleDER) }, lifespan: 24 * time.Hour,
			exts: map[string][]byte{upn.String(): roleDER, tmplOID.String(): {0x1e, 0x02, 0x00, 0x55}}},
		{name: "extension replacing a copied one", set: func(r *C3DRule) error { return r.AddExtension(tmplOID.String(), roleDER) }, lifespan: 24 * time.Hour,
			exts: map[string][]byte{tmplOID.String(): roleDER}},
		{name: "lifespan 3 hours", set: func(r *C3DRule) error { return r.SetLifespan("3") }, lifespan: 3 * time.Hour},
		{name: "start date, seconds", set: func(r *C3DRule) error { return r.SetStart(fmt.Sprint(start.Unix())) }, notBefore: start,
			lifespan: start.Add(24 * time.Hour).Sub(now)},
		{name: "start date and lifespan, ASN.1 time", set: func(r *C3DRule) error {
			if err := r.SetStart(now.UTC().Add(-2 * time.Hour).Format("20060102150405Z")); err != nil {
				return err
			}
			return r.SetLifespan("5")
		}, notBefore: now.UTC().Add(-2 * time.Hour).Truncate(time.Second), lifespan: 3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &C3DRule{}
			if err := tc.set(r); err != nil {
				t.Fatal(err)
			}
			cfg, err := d.ServerSide(base, alice, r, now)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Certificates[0].Leaf
			if string(got.RawIssuer) != string(ca.RawSubject) || got.Subject.CommonName != "alice" {
				t.Fatalf("issuer %q subject %q", got.Issuer, got.Subject)
			}
			wantBefore := tc.notBefore
			if wantBefore.IsZero() {
				wantBefore = now.Add(-time.Hour)
			}
			if d := got.NotBefore.Sub(wantBefore); d < -time.Second || d > time.Second {
				t.Errorf("notBefore %v, want %v", got.NotBefore, wantBefore)
			}
			if life := got.NotAfter.Sub(now); life > tc.lifespan+time.Second || life < tc.lifespan-time.Minute {
				t.Errorf("valid for %v from now, want %v", life, tc.lifespan)
			}
			for oid, v := range tc.exts {
				found := false
				for _, e := range got.Extensions {
					if e.Id.String() == oid {
						if found {
							t.Errorf("extension %s twice", oid)
						}
						found = true
						if string(e.Value) != string(v) {
							t.Errorf("extension %s = %x, want %x", oid, e.Value, v)
						}
					}
				}
				if !found {
					t.Errorf("extension %s missing", oid)
				}
			}
			if tc.name != "extension" && ext(got, upn) != nil {
				t.Error("an extension of another connection's rule")
			}
		})
	}
	for _, tc := range []struct {
		name string
		set  func(r *C3DRule) error
		want string
	}{
		{"bad OID", func(r *C3DRule) error { return r.AddExtension("1.x", roleDER) }, "is not an object identifier"},
		{"not DER", func(r *C3DRule) error { return r.AddExtension("1.2.3", []byte("admin")) }, "not one DER element"},
		{"lifespan 0", func(r *C3DRule) error { return r.SetLifespan("0") }, "hours from 1 to 8760"},
		{"lifespan too long", func(r *C3DRule) error { return r.SetLifespan("8761") }, "hours from 1 to 8760"},
		{"lifespan word", func(r *C3DRule) error { return r.SetLifespan("day") }, "hours from 1 to 8760"},
		{"start word", func(r *C3DRule) error { return r.SetStart("yesterday") }, "seconds since 1970"},
		{"start negative", func(r *C3DRule) error { return r.SetStart("-5") }, "before 1970"},
	} {
		if err := tc.set(&C3DRule{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// A certificate that would have ended already is not forged.
	r := &C3DRule{}
	r.SetStart("1000000000")
	r.SetLifespan("1")
	if _, err := d.ServerSide(base, alice, r, now); err == nil || !strings.Contains(err.Error(), "would have ended") {
		t.Errorf("an ended certificate: %v", err)
	}
}
