package tlsprof

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dial handshakes with addr and returns the connection state.
func dial(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	d := &tls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	tc := c.(*tls.Conn)
	// A refused client certificate shows after the handshake in TLS 1.3:
	// read the answer to see it.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	if n, err := c.Read(buf); n == 0 {
		return tc.ConnectionState(), err
	}
	return tc.ConnectionState(), nil
}

func TestClientSSLHandshakes(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	rsaCK := p.chain(t, "rsa", "rsa", "www.example")
	ecCK := p.chain(t, "ec", "ecdsa", "www.example")
	roots := p.ca(t).Pool()
	for _, tc := range []struct {
		name    string
		prof    ClientSSL
		client  *tls.Config
		version uint16
		suite   uint16
		fail    bool
	}{
		{name: "tls1.3 default", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}},
			version: tls.VersionTLS13},
		{name: "no-tlsv1.3 gives 1.2", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}, Options: []string{"no-tlsv1.3"}},
			version: tls.VersionTLS12},
		{name: "client tls1.0 refused by !TLSv1", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}, Ciphers: "DEFAULT:!TLSv1"},
			client: &tls.Config{MaxVersion: tls.VersionTLS10}, fail: true},
		{name: "tls1.0 allowed", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}},
			client: &tls.Config{MaxVersion: tls.VersionTLS10}, version: tls.VersionTLS10},
		{name: "cipher chosen from string", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}, Ciphers: "ECDHE+AES256+AES-GCM", Options: []string{"no-tlsv1.3"}},
			version: tls.VersionTLS12, suite: tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		{name: "client lacks the suite", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}, Ciphers: "ECDHE-RSA-AES256-GCM-SHA384", Options: []string{"no-tlsv1.3"}},
			client: &tls.Config{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}, fail: true},
		{name: "ecdsa certificate for ecdsa suites", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK, ecCK}, Ciphers: "ECDHE_ECDSA", Options: []string{"no-tlsv1.3"}},
			version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{name: "rsa key exchange", prof: ClientSSL{CertKeyChain: []CertKeyChain{rsaCK}, Ciphers: "AES128-GCM-SHA256", Options: []string{"no-tlsv1.3"}},
			client: &tls.Config{CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256}}, version: tls.VersionTLS12, suite: tls.TLS_RSA_WITH_AES_128_GCM_SHA256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prof.Name = "/Common/cs"
			b, err := tc.prof.Build()
			if err != nil {
				t.Fatal(err)
			}
			addr := serve(t, b.Config)
			cc := &tls.Config{}
			if tc.client != nil {
				cc = tc.client.Clone()
			}
			cc.RootCAs, cc.ServerName = roots, "www.example"
			if cc.MinVersion == 0 {
				cc.MinVersion = tls.VersionTLS10
			}
			if len(cc.CipherSuites) == 0 {
				cc.CipherSuites = b.Config.CipherSuites
			}
			st, err := dial(addr, cc)
			if tc.fail {
				if err == nil {
					t.Fatalf("handshake succeeded: version %x suite %x", st.Version, st.CipherSuite)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Version != tc.version {
				t.Errorf("version %s, want %s", VersionName(st.Version), VersionName(tc.version))
			}
			if tc.suite != 0 && st.CipherSuite != tc.suite {
				t.Errorf("suite %s, want %s", tls.CipherSuiteName(st.CipherSuite), tls.CipherSuiteName(tc.suite))
			}
		})
	}
}

func TestClientSSLClientCertificates(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	srv := p.chain(t, "srv", "rsa", "www.example")
	ccp, ckp := p.leaf(t, "client", "ecdsa", true, "client.example")
	clientCert, err := tls.LoadX509KeyPair(ccp, ckp)
	if err != nil {
		t.Fatal(err)
	}
	other := newPKI(t)
	ocp, okp := other.leaf(t, "stranger", "ecdsa", true, "stranger.example")
	stranger, _ := tls.LoadX509KeyPair(ocp, okp)
	for _, tc := range []struct {
		mode  string
		cert  *tls.Certificate
		depth int
		fail  bool
	}{
		{"require", &clientCert, 0, false},
		{"require", nil, 0, true},
		{"require", &stranger, 0, true},
		{"request", nil, 0, false},
		{"request", &clientCert, 0, false},
		// request lets every client in (BIG-IP "always authenticates the
		// client"); its rules read the verdict (TestVerifyResult).
		{"request", &stranger, 0, false},
		{"ignore", nil, 0, false},
	} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			name := tc.mode + "/" + VersionName(ver)
			if tc.cert != nil {
				name += "/" + tc.cert.Leaf.Subject.CommonName
			}
			t.Run(name, func(t *testing.T) {
				prof := &ClientSSL{Name: "/Common/mtls", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: tc.mode, CAFile: p.ca(t)}
				b, err := prof.Build()
				if err != nil {
					t.Fatal(err)
				}
				addr := serve(t, b.Config)
				cc := &tls.Config{RootCAs: p.ca(t).Pool(), ServerName: "www.example", MinVersion: ver, MaxVersion: ver}
				if tc.cert != nil {
					cc.Certificates = []tls.Certificate{*tc.cert}
				}
				_, err = dial(addr, cc)
				if tc.fail != (err != nil) {
					t.Fatalf("handshake error %v, want failure %v", err, tc.fail)
				}
				if tc.cert != nil {
					want := 0
					if tc.cert == &stranger {
						want = 20 // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
					}
					if got := b.VerifyResult([]*x509.Certificate{tc.cert.Leaf}); got != want {
						t.Errorf("VerifyResult %d, want %d", got, want)
					}
				}
			})
		}
	}
	if _, err := (&ClientSSL{Name: "/Common/x", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: "require"}).Build(); err == nil {
		t.Fatal("require without ca-file accepted")
	}
	if _, err := (&ClientSSL{Name: "/Common/x", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: "always"}).Build(); err == nil {
		t.Fatal("bad peer-cert-mode accepted")
	}
}

func TestSNISelection(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	build := func(name, server string, def, req bool, names ...string) *Built {
		b, err := (&ClientSSL{Name: name, ServerName: server, SNIDefault: def, SNIRequire: req,
			CertKeyChain: []CertKeyChain{p.chain(t, strings.TrimPrefix(name, "/Common/"), "ecdsa", names...)}}).Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := build("/Common/a", "a.example", false, false, "a.example")
	wild := build("/Common/wild", "*.b.example", false, false, "*.b.example")
	def := build("/Common/def", "", true, false, "default.example")
	cfg, err := ForVirtual("/Common/vs", []*Built{a, wild, def})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	for sni, want := range map[string]string{"a.example": "a.example", "x.b.example": "*.b.example", "other.example": "default.example", "": "default.example"} {
		st, err := dial(addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("%q: %v", sni, err)
		}
		if got := st.PeerCertificates[0].DNSNames[0]; got != want {
			t.Errorf("SNI %q got certificate %s, want %s", sni, got, want)
		}
		// Pick, for the profiles' statistics, names the profile that served.
		if got := []string{"a.example", "*.b.example", "default.example"}[Pick([]*Built{a, wild, def}, sni)]; got != want {
			t.Errorf("Pick(%q) chose %s, ForVirtual %s", sni, got, want)
		}
	}
	if Pick([]*Built{a, def}, "A.EXAMPLE") != 0 || Pick([]*Built{a, def}, "") != 1 || Pick([]*Built{a, wild}, "") != 0 {
		t.Error("Pick ignores case, or misses the sni-default (the first without one)")
	}
	if _, err := ForVirtual("/Common/vs", []*Built{a, wild}); err == nil || !strings.Contains(err.Error(), "none is sni-default") {
		t.Fatalf("no default: %v", err)
	}
	def2 := build("/Common/def2", "", true, false, "d2.example")
	if _, err := ForVirtual("/Common/vs", []*Built{def, def2}); err == nil || !strings.Contains(err.Error(), "both sni-default") {
		t.Fatalf("two defaults: %v", err)
	}
	req := build("/Common/req", "", true, true, "req.example")
	cfg, err = ForVirtual("/Common/vs2", []*Built{req})
	if err != nil {
		t.Fatal(err)
	}
	addr = serve(t, cfg)
	if _, err := dial(addr, &tls.Config{InsecureSkipVerify: true}); err == nil {
		t.Fatal("sni-require accepted a hello without SNI")
	}
	if _, err := dial(addr, &tls.Config{ServerName: "req.example", InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
}

func TestServerSSL(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	srv := p.chain(t, "member", "rsa", "member.example")
	ccp, ckp := p.leaf(t, "bigip", "ecdsa", true, "bigip.example")
	cc, _ := LoadCert("/Common/bigip.crt", ccp)
	ck, _ := LoadKey("/Common/bigip.key", ckp, "")
	member, err := (&ClientSSL{Name: "/Common/member", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: "require", CAFile: p.ca(t)}).Build()
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, member.Config)
	for _, tc := range []struct {
		name string
		prof ServerSSL
		fail bool
	}{
		{"client cert, no verification", ServerSSL{Cert: cc, Key: ck}, false},
		{"no client cert", ServerSSL{}, true},
		{"verified with name", ServerSSL{Cert: cc, Key: ck, PeerCertMode: "require", CAFile: p.ca(t), AuthenticateName: "member.example"}, false},
		{"wrong authenticate-name", ServerSSL{Cert: cc, Key: ck, PeerCertMode: "require", CAFile: p.ca(t), AuthenticateName: "other.example"}, true},
		{"untrusted issuer", ServerSSL{Cert: cc, Key: ck, PeerCertMode: "require", CAFile: newPKI(t).ca(t)}, true},
		{"tls1.2 only", ServerSSL{Cert: cc, Key: ck, Options: []string{"no-tlsv1.3"}, Ciphers: "ECDHE-RSA-AES128-GCM-SHA256"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prof.Name = "/Common/ss"
			b, err := tc.prof.Build()
			if err != nil {
				t.Fatal(err)
			}
			_, err = dial(addr, b.Config)
			if tc.fail != (err != nil) {
				t.Fatalf("error %v, want failure %v", err, tc.fail)
			}
		})
	}
}

func TestBuildWarningsAndErrors(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "w", "rsa", "w.example")
	b, err := (&ClientSSL{Name: "/Common/w", CertKeyChain: []CertKeyChain{ck}, Renegotiation: true, Options: []string{"no-tlsv1.1"}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(b.Warnings, "\n")
	if !strings.Contains(joined, "renegotiation") || !strings.Contains(joined, "gap") {
		t.Fatalf("warnings: %v", b.Warnings)
	}
	if b.Config.MinVersion != tls.VersionTLS12 {
		t.Fatalf("min version %x", b.Config.MinVersion)
	}
	if _, err := (&ClientSSL{Name: "/Common/w", CertKeyChain: []CertKeyChain{ck}, Options: []string{"no-tlsv2"}}).Build(); err == nil || !strings.Contains(err.Error(), "unknown option") {
		t.Fatalf("bad option: %v", err)
	}
	if _, err := (&ClientSSL{Name: "/Common/w", CertKeyChain: []CertKeyChain{ck}, Ciphers: "TLSv1_2", Options: []string{"no-tlsv1.2"}}).Build(); err == nil || !strings.Contains(err.Error(), "no protocol version") {
		t.Fatalf("no version: %v", err)
	}
	if _, err := (&ClientSSL{Name: "/Common/w"}).Build(); err == nil {
		t.Fatal("no certificate accepted")
	}
}

// TestRealClients runs openssl s_client and curl against a client-ssl
// profile when they are installed.
func TestRealClients(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	a := p.chain(t, "ra", "rsa", "a.example")
	def := p.chain(t, "rdef", "rsa", "default.example")
	ba, _ := (&ClientSSL{Name: "/Common/a", ServerName: "a.example", CertKeyChain: []CertKeyChain{a}}).Build()
	bd, _ := (&ClientSSL{Name: "/Common/d", SNIDefault: true, CertKeyChain: []CertKeyChain{def}, Ciphers: "ECDHE+AES-GCM:ECDHE+CHACHA20:TLS13"}).Build()
	cfg, err := ForVirtual("/Common/vs", []*Built{ba, bd})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	run := func(name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdin = strings.NewReader("")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	t.Run("openssl", func(t *testing.T) {
		if _, err := exec.LookPath("openssl"); err != nil {
			t.Skip("openssl is not installed")
		}
		out, err := run("openssl", "s_client", "-ign_eof", "-connect", addr, "-servername", "a.example", "-tls1_2", "-CAfile", p.caPath, "-verify_return_error")
		if err != nil || !strings.Contains(out, "subject=CN = a.example") && !strings.Contains(out, "subject=CN=a.example") || !strings.Contains(out, "Verify return code: 0") {
			t.Fatalf("s_client with SNI a.example: %v\n%s", err, out)
		}
		out, err = run("openssl", "s_client", "-ign_eof", "-connect", addr, "-servername", "z.example", "-tls1_3", "-CAfile", p.caPath)
		if err != nil || !strings.Contains(out, "default.example") || !strings.Contains(out, "TLSv1.3") {
			t.Fatalf("s_client default profile: %v\n%s", err, out)
		}
		out, err = run("openssl", "s_client", "-ign_eof", "-connect", addr, "-servername", "z.example", "-tls1_2", "-cipher", "AES128-SHA")
		if err == nil && strings.Contains(out, "Cipher is AES128-SHA") {
			t.Fatalf("a suite outside the default profile's list was negotiated:\n%s", out)
		}
	})
	t.Run("openssl client certificate", func(t *testing.T) {
		if _, err := exec.LookPath("openssl"); err != nil {
			t.Skip("openssl is not installed")
		}
		srv := p.chain(t, "mtls", "rsa", "m.example")
		b, err := (&ClientSSL{Name: "/Common/mtls", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: "require", CAFile: p.ca(t)}).Build()
		if err != nil {
			t.Fatal(err)
		}
		maddr := serve(t, b.Config)
		ccp, ckp := p.leaf(t, "sclient", "rsa", true, "sclient.example")
		out, err := run("openssl", "s_client", "-ign_eof", "-connect", maddr, "-servername", "m.example", "-cert", ccp, "-key", ckp, "-CAfile", p.caPath)
		if err != nil || !strings.Contains(out, "HTTP/1.0 200 OK") {
			t.Fatalf("s_client with a client certificate: %v\n%s", err, out)
		}
		out, err = run("openssl", "s_client", "-ign_eof", "-connect", maddr, "-servername", "m.example", "-CAfile", p.caPath)
		if err == nil && strings.Contains(out, "HTTP/1.0 200 OK") {
			t.Fatalf("s_client without a client certificate was answered:\n%s", out)
		}
	})
	t.Run("curl", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		_, port, _ := strings.Cut(addr, ":")
		out, err := run("curl", "-sS", "--max-time", "5", "--cacert", p.caPath, "--resolve", "a.example:"+port+":127.0.0.1", "https://a.example:"+port+"/")
		if err != nil || !strings.Contains(out, "ok") {
			t.Fatalf("curl: %v\n%s", err, out)
		}
	})
}

// intermediateClient issues an intermediate CA under p and a client
// certificate under it, returned with the intermediate in its chain.
func intermediateClient(t *testing.T, p *pki) tls.Certificate {
	t.Helper()
	ikey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	itmpl := &x509.Certificate{SerialNumber: big.NewInt(900), Subject: pkix.Name{CommonName: "intermediate"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	ider, err := x509.CreateCertificate(rand.Reader, itmpl, p.caCert, ikey.Public(), p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	inter, _ := x509.ParseCertificate(ider)
	lkey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ltmpl := &x509.Certificate{SerialNumber: big.NewInt(901), Subject: pkix.Name{CommonName: "deep.client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	lder, err := x509.CreateCertificate(rand.Reader, ltmpl, inter, lkey.Public(), ikey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{lder, ider}, PrivateKey: lkey}
}

func TestAuthenticateDepth(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	srv := p.chain(t, "depth", "rsa", "www.example")
	deep := intermediateClient(t, p)
	for _, tc := range []struct {
		depth int
		fail  bool
	}{{0, true}, {1, false}, {-1, false}} {
		t.Run(fmt.Sprint(tc.depth), func(t *testing.T) {
			b, err := (&ClientSSL{Name: "/Common/d", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: "require",
				CAFile: p.ca(t), AuthenticateDepth: tc.depth}).Build()
			if err != nil {
				t.Fatal(err)
			}
			addr := serve(t, b.Config)
			_, err = dial(addr, &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{deep}})
			if tc.fail != (err != nil) {
				t.Fatalf("depth %d: error %v, want failure %v", tc.depth, err, tc.fail)
			}
		})
	}
}

func TestServerSSLForServerName(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	member, err := (&ClientSSL{Name: "/Common/m", CertKeyChain: []CertKeyChain{p.chain(t, "sn", "ecdsa", "sn.example")}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 8)
	cfg := member.Config.Clone()
	cfg.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) { seen <- h.ServerName; return nil, nil }
	addr := serve(t, cfg)
	b, err := (&ServerSSL{Name: "/Common/ss"}).Build()
	if err != nil {
		t.Fatal(err)
	}
	c1 := b.ForServerName("one.example")
	if c2 := b.ForServerName("one.example"); c1 != c2 {
		t.Fatal("a configuration per connection")
	}
	if b.ForServerName("") != b.Config {
		t.Fatal("no name must use the profile's configuration")
	}
	if _, err := dial(addr, c1); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "one.example" {
		t.Fatalf("member saw SNI %q", got)
	}
	fixed, _ := (&ServerSSL{Name: "/Common/fixed", ServerName: "fixed.example"}).Build()
	if _, err := dial(addr, fixed.ForServerName("client.example")); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "fixed.example" {
		t.Fatalf("member saw SNI %q, want the profile's server-name", got)
	}
}

func TestSessionTickets(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	ck := p.chain(t, "tick", "ecdsa", "tick.example")
	for _, tickets := range []bool{true, false} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(fmt.Sprintf("%v/%s", tickets, VersionName(ver)), func(t *testing.T) {
				b, err := (&ClientSSL{Name: "/Common/t", CertKeyChain: []CertKeyChain{ck}, SessionTicket: tickets}).Build()
				if err != nil {
					t.Fatal(err)
				}
				addr := serve(t, b.Config)
				ss, err := (&ServerSSL{Name: "/Common/s", SessionTicket: true, CacheSize: 16}).Build()
				if err != nil {
					t.Fatal(err)
				}
				cfg := ss.Config.Clone()
				cfg.MinVersion, cfg.MaxVersion = ver, ver
				if _, err := dial(addr, cfg); err != nil {
					t.Fatal(err)
				}
				st, err := dial(addr, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if st.DidResume != tickets {
					t.Fatalf("resumed %v with session-ticket %v", st.DidResume, tickets)
				}
			})
		}
	}
}
