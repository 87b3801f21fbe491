package sslfwd

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// issue makes a certificate for tmpl signed by parent's key (self-signed
// when parent is nil).
func issue(t *testing.T, tmpl *x509.Certificate, parent *x509.Certificate, parentKey crypto.Signer, key crypto.Signer) *x509.Certificate {
	t.Helper()
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(48 * time.Hour)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func caTmpl(cn string) *x509.Certificate {
	return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
}

// origin is a server certificate for names, issued by its own CA.
func origin(t *testing.T, cn string, names ...string) (tls.Certificate, *x509.Certificate) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Origin CA"), nil, nil, caKey)
	key := ecKey(t)
	leaf := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: []string{"Origin Org"}}, DNSNames: names,
		IPAddresses: []net.IP{net.ParseIP("127.25.0.9")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, caKey, key)
	return tls.Certificate{Certificate: [][]byte{leaf.Raw, ca.Raw}, PrivateKey: key, Leaf: leaf}, ca
}

func TestNewRefuses(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Proxy CA"), nil, nil, caKey)
	notCA := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "leaf"}}, nil, nil, caKey)
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"no ca", Config{Name: "p", Client: &tls.Config{}}, "needs proxy-ca-cert and proxy-ca-key"},
		{"wrong key", Config{Name: "p", CA: ca, CAKey: ecKey(t), Client: &tls.Config{}}, "is not the key of"},
		{"not a ca", Config{Name: "p", CA: notCA, CAKey: caKey, Client: &tls.Config{}}, "is not a CA certificate"},
		{"bad extension", Config{Name: "p", CA: ca, CAKey: caKey, Client: &tls.Config{}, Extensions: []string{"frobnicate"}}, `unknown extension "frobnicate"`},
		{"good", Config{Name: "p", CA: ca, CAKey: caKey, Client: &tls.Config{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.c)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestForge(t *testing.T) {
	ecCAKey := ecKey(t)
	ecCA := issue(t, caTmpl("Proxy CA EC"), nil, nil, ecCAKey)
	rsaCAKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaCA := issue(t, caTmpl("Proxy CA RSA"), nil, nil, rsaCAKey)
	pair, _ := origin(t, "www.origin.test", "www.origin.test", "origin.test")
	for _, tc := range []struct {
		name    string
		ca      *x509.Certificate
		key     crypto.Signer
		exts    []string
		wantAlg x509.PublicKeyAlgorithm
		sans    bool
		eku     bool
	}{
		{"ecdsa ca, defaults", ecCA, ecCAKey, nil, x509.ECDSA, true, false},
		{"rsa ca, defaults", rsaCA, rsaCAKey, nil, x509.RSA, true, false},
		{"with eku", ecCA, ecCAKey, []string{ExtSubjectAltName, ExtExtendedKeyUsage}, x509.ECDSA, true, true},
		{"no sans", ecCA, ecCAKey, []string{ExtBasicConstraints}, x509.ECDSA, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Config{Name: "fp", CA: tc.ca, CAKey: tc.key, Client: &tls.Config{}, Extensions: tc.exts, Lifespan: 24 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			cfg, err := p.ClientConfig(pair.Leaf, now)
			if err != nil {
				t.Fatal(err)
			}
			f := cfg.Certificates[0].Leaf
			if f.Issuer.String() != tc.ca.Subject.String() || f.Subject.String() != pair.Leaf.Subject.String() {
				t.Fatalf("issuer %q subject %q", f.Issuer, f.Subject)
			}
			if f.PublicKeyAlgorithm != tc.wantAlg {
				t.Fatalf("key %v, want %v", f.PublicKeyAlgorithm, tc.wantAlg)
			}
			if got := slices.Equal(f.DNSNames, pair.Leaf.DNSNames) && len(f.IPAddresses) == 1; got != tc.sans {
				t.Fatalf("SANs %v %v, copied %v, want %v", f.DNSNames, f.IPAddresses, got, tc.sans)
			}
			if got := len(f.ExtKeyUsage) > 0; got != tc.eku {
				t.Fatalf("EKU %v", f.ExtKeyUsage)
			}
			if d := f.NotAfter.Sub(now); d > 24*time.Hour || d < 23*time.Hour {
				t.Fatalf("lifespan %v", d)
			}
			roots := x509.NewCertPool()
			roots.AddCert(tc.ca)
			if _, err := f.Verify(x509.VerifyOptions{Roots: roots, DNSName: "origin.test"}); err != nil && tc.sans {
				t.Fatalf("forged certificate does not verify: %v", err)
			}
			// Kept: the same configuration for the same origin certificate.
			again, err := p.ClientConfig(pair.Leaf, now.Add(time.Minute))
			if err != nil || again != cfg || p.Cached() != 1 {
				t.Fatalf("not kept: %v %v %d", err, again == cfg, p.Cached())
			}
			// Near its end, forged again.
			later, err := p.ClientConfig(pair.Leaf, now.Add(23*time.Hour+30*time.Minute))
			if err != nil || later == cfg {
				t.Fatalf("not renewed near its end: %v", err)
			}
		})
	}
}

func TestBypassDecide(t *testing.T) {
	pfx := func(s ...string) (out []netip.Prefix) {
		for _, x := range s {
			out = append(out, netip.MustParsePrefix(x))
		}
		return out
	}
	src, dst := netip.MustParseAddr("127.25.1.1"), netip.MustParseAddr("127.25.2.2")
	lists := &Bypass{
		DstBypass:     pfx("127.25.2.0/24"),
		SrcIntercept:  pfx("127.25.1.1/32"),
		HostBypass:    []string{"bank.test", "*.health.test"},
		HostIntercept: []string{"evil.bank.test"},
	}
	for _, tc := range []struct {
		name     string
		b        *Bypass
		src, dst netip.Addr
		sni      string
		want     bool
	}{
		{"nil lists intercept", nil, src, dst, "bank.test", false},
		{"empty default intercept", &Bypass{}, src, dst, "x", false},
		{"empty default bypass", &Bypass{Default: true}, src, dst, "x", true},
		{"destination bypass first", lists, src, dst, "other.test", true},
		{"source intercept", lists, src, netip.MustParseAddr("127.25.3.3"), "bank.test", false},
		{"host bypass", lists, netip.MustParseAddr("127.25.1.2"), netip.MustParseAddr("127.25.3.3"), "www.BANK.test.", true},
		{"host intercept before bypass", lists, netip.MustParseAddr("127.25.1.2"), netip.MustParseAddr("127.25.3.3"), "evil.bank.test", false},
		{"wildcard: subdomain only", lists, netip.MustParseAddr("127.25.1.2"), netip.MustParseAddr("127.25.3.3"), "health.test", false},
		{"wildcard subdomain", lists, netip.MustParseAddr("127.25.1.2"), netip.MustParseAddr("127.25.3.3"), "a.health.test", true},
		{"no sni: no host list", lists, netip.MustParseAddr("127.25.1.2"), netip.MustParseAddr("127.25.3.3"), "", false},
		{"default bypass: intercept list", &Bypass{Default: true, HostIntercept: []string{"x.test"}}, src, dst, "x.test", false},
		{"default bypass: bypass list before intercept", &Bypass{Default: true, DstBypass: pfx("127.25.2.2/32"), DstIntercept: pfx("127.25.2.0/24")}, src, dst, "", true},
		{"default intercept: intercept list before bypass", &Bypass{DstBypass: pfx("127.25.2.2/32"), DstIntercept: pfx("127.25.2.0/24")}, src, dst, "", false},
		{"mapped address", &Bypass{SrcBypass: pfx("127.25.1.0/24")}, netip.AddrFrom16(src.As16()), dst, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.Decide(tc.src, tc.dst, tc.sni); got != tc.want {
				t.Fatalf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestIntercept runs a client trusting only the proxy's CA through
// Intercept to an origin on loopback, and one whose origin refuses the
// hello (an alert).
func TestIntercept(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Proxy CA"), nil, nil, caKey)
	pair, originCA := origin(t, "www.origin.test", "www.origin.test")
	originPool := x509.NewCertPool()
	originPool.AddCert(originCA)
	clientPair, _ := origin(t, "proxy client", "proxy.client.test")
	cert := []tls.Certificate{pair}
	for _, tc := range []struct {
		name      string
		cfg       Config // but for Name, CA, CAKey and Client
		server    *tls.Config
		verify    bool // the server-ssl side checks the origin against its CA
		max       uint16
		withCert  bool // the server-ssl side has a client certificate
		wantAlert bool // Intercept's bypass
		wantErr   bool
	}{
		{"intercepted", Config{}, &tls.Config{Certificates: cert}, true, tls.VersionTLS12, false, false, false},
		{"origin alert", Config{BypassOnAlert: true}, &tls.Config{Certificates: cert, MinVersion: tls.VersionTLS13}, false, tls.VersionTLS12, false, true, true},
		{"origin alert, no bypass-on-handshake-alert", Config{}, &tls.Config{Certificates: cert, MinVersion: tls.VersionTLS13}, false, tls.VersionTLS12, false, false, true},
		{"certificate requested, TLS 1.2", Config{BypassOnCertRequest: true}, &tls.Config{Certificates: cert, ClientAuth: tls.RequestClientCert}, true, tls.VersionTLS12, false, true, true},
		{"certificate requested, TLS 1.3", Config{BypassOnCertRequest: true}, &tls.Config{Certificates: cert, ClientAuth: tls.RequireAnyClientCert}, true, tls.VersionTLS13, false, true, true},
		{"certificate requested, not bypassed", Config{}, &tls.Config{Certificates: cert, ClientAuth: tls.RequestClientCert}, true, tls.VersionTLS12, false, false, false},
		{"certificate requested, profile has one", Config{BypassOnCertRequest: true}, &tls.Config{Certificates: cert, ClientAuth: tls.RequireAnyClientCert}, true, tls.VersionTLS12, true, false, false},
		{"no request, bypass-on-client-cert-fail", Config{BypassOnCertRequest: true}, &tls.Config{Certificates: cert}, true, tls.VersionTLS13, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Name, cfg.CA, cfg.CAKey, cfg.Client = "fp", ca, caKey, &tls.Config{MinVersion: tls.VersionTLS12}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.25.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				s := tls.Server(c, tc.server)
				s.SetDeadline(time.Now().Add(5 * time.Second))
				io.Copy(s, s) // echo
			}()
			cl, sv := net.Pipe()
			defer cl.Close()
			done := make(chan error, 1)
			var seen *x509.Certificate
			go func() {
				c := tls.Client(cl, &tls.Config{ServerName: "www.origin.test", RootCAs: rootsOf(ca), MaxVersion: tls.VersionTLS12})
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if err := c.Handshake(); err != nil {
					done <- err
					return
				}
				seen = c.ConnectionState().PeerCertificates[0]
				c.Write([]byte("ping"))
				b := make([]byte, 4)
				_, err := io.ReadFull(c, b)
				if err == nil && string(b) != "ping" {
					err = io.ErrUnexpectedEOF
				}
				done <- err
			}()
			raw, h, err := ReadHello(sv, nil, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if h.ServerName != "www.origin.test" {
				t.Fatalf("sni %q", h.ServerName)
			}
			oc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer oc.Close()
			server := func(sni string) *tls.Config {
				c := &tls.Config{ServerName: sni, MaxVersion: tc.max}
				if tc.withCert {
					c.Certificates = []tls.Certificate{clientPair}
				}
				if tc.verify {
					c.RootCAs = originPool
				} else {
					c.InsecureSkipVerify = true
				}
				return c
			}
			c, o, alert, err := p.Intercept(sv, raw, h.ServerName, oc, server, time.Now().Add(5*time.Second))
			if alert != tc.wantAlert || (err != nil) != tc.wantErr {
				t.Fatalf("alert %v err %v", alert, err)
			}
			if err != nil {
				return
			}
			go io.Copy(o, c)
			go io.Copy(c, o)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if seen.Issuer.CommonName != "Proxy CA" || !slices.Equal(seen.DNSNames, []string{"www.origin.test"}) {
				t.Fatalf("client saw issuer %q names %v", seen.Issuer.CommonName, seen.DNSNames)
			}
		})
	}
}

func rootsOf(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}

// TestForgersShared: proxies of the same CA and forging settings share
// their forged certificates (a commit keeps them); other settings do not.
func TestForgersShared(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Proxy CA"), nil, nil, caKey)
	pair, _ := origin(t, "www.origin.test", "www.origin.test")
	shared := &Forgers{}
	mk := func(lifespan time.Duration) *Proxy {
		p, err := New(Config{Name: "fp", CA: ca, CAKey: caKey, Client: &tls.Config{}, Lifespan: lifespan, Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := mk(0)
	ca1, err := a.ClientConfig(pair.Leaf, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		p      *Proxy
		shares bool
	}{
		{"same settings", mk(0), true},
		{"other lifespan", mk(48 * time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.p.ClientConfig(pair.Leaf, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			same := string(cfg.Certificates[0].Certificate[0]) == string(ca1.Certificates[0].Certificate[0])
			if same != tc.shares {
				t.Fatalf("same forged certificate %v, want %v", same, tc.shares)
			}
		})
	}
}
