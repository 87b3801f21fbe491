package dataplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// forwardTLS is a virtual's TLS with the SSL forward proxy: ca signs
// the forged certificates, server is the server-ssl profile's settings,
// on says which member refusals are bypassed (its BypassOn fields).
func forwardTLS(t *testing.T, ca *tlsprof.Cert, caKey *tlsprof.Key, server tlsprof.ServerSSL, bypass *sslfwd.Bypass, on sslfwd.Config) *TLS {
	t.Helper()
	def, defKey, _ := testCert(t, "default.example")
	tc := clientSSL(t, def, defKey)
	sb, err := server.Build()
	if err != nil {
		t.Fatal(err)
	}
	tc.Server = sb
	tc.Forward, err = sslfwd.New(sslfwd.Config{Name: "/Common/fwd", CA: ca.Certs[0], CAKey: caKey.Signer,
		Client: tc.ClientBuilt[0].Config, Bypass: bypass, BypassOnAlert: on.BypassOnAlert, BypassOnCertRequest: on.BypassOnCertRequest})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// fwdAsk sends one line over TLS to vs naming sni, trusting roots, and
// returns the answer and the certificate the client was shown.
func fwdAsk(vs, sni string, roots *x509.CertPool, src string) (string, *x509.Certificate, error) {
	d := &net.Dialer{Timeout: 2 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{ServerName: sni, RootCAs: roots})
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return line, c.ConnectionState().PeerCertificates[0], err
}

// TestSSLForwardProxyVirtual runs clients through a standard virtual
// with the SSL forward proxy to a TLS member: intercepted, the client
// trusting only the proxy's CA sees the member's names on a certificate
// the CA issued; bypassed (a list, the member's alert with
// bypass-on-handshake-alert, or its request for a client certificate
// with bypass-on-client-cert-fail), it sees the member's own certificate;
// a member the server-ssl profile does not trust is never shown: the
// client's handshake waits for the member's, verified
// (ssl-forward-proxy-verified-handshake).
func TestSSLForwardProxyVirtual(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, memberRoots := testCert(t, "www.origin.test", "origin.test")
	otherCA, _, _ := testCert(t, "Other CA")
	startTLSServer(t, "127.25.1.11:8443", "S1", mcert, mkey)
	// A member that speaks TLS 1.3 only: a server-ssl limited to 1.2 gets its alert.
	pair, err := tlsprof.Pair("m2", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln13, err := tls.Listen("tcp", "127.25.1.12:8443", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln13, func(c net.Conn) {
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err == nil {
			io.WriteString(c, "S2 Response tls13\n")
		}
	})
	// A member that asks for a client certificate (TLS 1.2 and 1.3).
	ln14, err := tls.Listen("tcp", "127.25.1.14:8443", &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln14, func(c net.Conn) {
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err == nil {
			n := len(c.(*tls.Conn).ConnectionState().PeerCertificates)
			fmt.Fprintf(c, "S4 Response certs=%d\n", n)
		}
	})
	pfx := func(s string) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(s)} }
	for _, tc := range []struct {
		name    string
		member  string
		server  tlsprof.ServerSSL
		bypass  *sslfwd.Bypass
		onAlert bool
		onCert  bool
		src     string
		sni     string
		roots   *x509.CertPool
		issuer  string // "" : the handshake fails
		answer  string
	}{
		{name: "intercepted", member: "127.25.1.11:8443", sni: "www.origin.test", roots: proxyRoots, issuer: "Proxy CA", answer: "S1 Response tls\n"},
		{name: "intercepted, member verified", member: "127.25.1.11:8443", server: tlsprof.ServerSSL{PeerCertMode: "require", CAFile: mcert},
			sni: "origin.test", roots: proxyRoots, issuer: "Proxy CA", answer: "S1 Response tls\n"},
		{name: "member untrusted: dropped", member: "127.25.1.11:8443", server: tlsprof.ServerSSL{PeerCertMode: "require", CAFile: otherCA},
			sni: "www.origin.test", roots: proxyRoots},
		{name: "hostname bypass", member: "127.25.1.11:8443", bypass: &sslfwd.Bypass{HostBypass: []string{"origin.test"}},
			sni: "www.origin.test", roots: memberRoots, issuer: "www.origin.test", answer: "S1 Response tls\n"},
		{name: "hostname bypass, not this name", member: "127.25.1.11:8443", bypass: &sslfwd.Bypass{HostBypass: []string{"bank.test"}},
			sni: "www.origin.test", roots: proxyRoots, issuer: "Proxy CA", answer: "S1 Response tls\n"},
		{name: "source bypass", member: "127.25.1.11:8443", bypass: &sslfwd.Bypass{SrcBypass: pfx("127.25.1.200/32")}, src: "127.25.1.200",
			sni: "www.origin.test", roots: memberRoots, issuer: "www.origin.test", answer: "S1 Response tls\n"},
		{name: "default bypass, hostname intercept", member: "127.25.1.11:8443", bypass: &sslfwd.Bypass{Default: true, HostIntercept: []string{"www.origin.test"}},
			sni: "www.origin.test", roots: proxyRoots, issuer: "Proxy CA", answer: "S1 Response tls\n"},
		{name: "member alert: bypassed", member: "127.25.1.12:8443", server: tlsprof.ServerSSL{Options: []string{"no-tlsv1.3"}}, onAlert: true,
			sni: "www.origin.test", roots: memberRoots, issuer: "www.origin.test", answer: "S2 Response tls13\n"},
		{name: "member alert: dropped", member: "127.25.1.12:8443", server: tlsprof.ServerSSL{Options: []string{"no-tlsv1.3"}},
			sni: "www.origin.test", roots: memberRoots},
		{name: "client certificate requested: bypassed", member: "127.25.1.14:8443", onCert: true,
			sni: "www.origin.test", roots: memberRoots, issuer: "www.origin.test", answer: "S4 Response certs=0\n"},
		{name: "client certificate requested, TLS 1.3: bypassed", member: "127.25.1.14:8443", server: tlsprof.ServerSSL{Options: []string{"no-tlsv1.2"}}, onCert: true,
			sni: "www.origin.test", roots: memberRoots, issuer: "www.origin.test", answer: "S4 Response certs=0\n"},
		{name: "client certificate requested: intercepted", member: "127.25.1.14:8443",
			sni: "www.origin.test", roots: proxyRoots, issuer: "Proxy CA", answer: "S4 Response certs=0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.25.1.10:443", tc.member)
			tc.server.Name, tc.server.AuthenticateDepth = "/Common/ss", -1
			cfg.Virtuals["/Common/vs"].TLS = forwardTLS(t, proxyCA, proxyKey, tc.server, tc.bypass, sslfwd.Config{BypassOnAlert: tc.onAlert, BypassOnCertRequest: tc.onCert})
			mustApply(t, p, cfg)
			for i := 0; i < 2; i++ { // the second one takes the kept certificate
				answer, seen, err := fwdAsk("127.25.1.10:443", tc.sni, tc.roots, tc.src)
				if tc.issuer == "" {
					if err == nil {
						t.Fatalf("handshake went through, issuer %q", seen.Issuer.CommonName)
					}
					var shown *tls.CertificateVerificationError
					if errors.As(err, &shown) {
						t.Fatalf("the client was shown a certificate: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if answer != tc.answer || seen.Issuer.CommonName != tc.issuer || seen.Subject.CommonName != "www.origin.test" ||
					fmt.Sprint(seen.DNSNames) != "[www.origin.test origin.test]" {
					t.Fatalf("answer %q, certificate of %q issued by %q for %v", answer, seen.Subject.CommonName, seen.Issuer.CommonName, seen.DNSNames)
				}
			}
			want := 0
			if tc.issuer == "Proxy CA" {
				want = 1
			}
			if n := cfg.Virtuals["/Common/vs"].TLS.Forward.Cached(); n != want {
				t.Fatalf("%d forged certificates kept, want %d", n, want)
			}
		})
	}
}

// TestExplicitProxySSLForward: an explicit proxy whose virtual has the
// forward proxy's client-ssl and server-ssl intercepts its CONNECT
// tunnels (the origin's names on a certificate of the proxy's CA, the
// origin seeing a TLS connection of the proxy's) unless a bypass list
// names the host; the proxy's own connection stays plaintext.
func TestExplicitProxySSLForward(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, memberRoots := testCert(t, "www.origin.test", "bank.origin.test")
	startBothServer(t, "127.25.2.32:443", mcert, mkey)
	ns := startNameserver(t, "127.25.2.53:0", map[string]string{"www.origin.test.": "127.25.2.32", "bank.origin.test.": "127.25.2.32"})
	for _, tc := range []struct {
		name   string
		bypass *sslfwd.Bypass
		host   string
		roots  *x509.CertPool
		issuer string
		on     sslfwd.Config
	}{
		{"intercepted", nil, "www.origin.test", proxyRoots, "Proxy CA", sslfwd.Config{}},
		{"bypassed", &sslfwd.Bypass{HostBypass: []string{"bank.origin.test"}}, "bank.origin.test", memberRoots, "www.origin.test", sslfwd.Config{}},
		{"not on the bypass list", &sslfwd.Bypass{HostBypass: []string{"bank.origin.test"}}, "www.origin.test", proxyRoots, "Proxy CA", sslfwd.Config{}},
		{"bypass-on-client-cert-fail, no request", nil, "www.origin.test", proxyRoots, "Proxy CA", sslfwd.Config{BypassOnCertRequest: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := l7Config(t, "127.25.2.10:3128", false, mblb.HTTPOptions{}, "", "127.25.2.31:80")
			cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true,
				Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
			cfg.Virtuals["/Common/vs"].TLS = forwardTLS(t, proxyCA, proxyKey, tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1}, tc.bypass, tc.on)
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			pu, _ := url.Parse("http://127.25.2.10:3128")
			tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: tc.roots}}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for i := 0; i < 2; i++ {
				resp, err := client.Get("https://" + tc.host + "/x")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.HasPrefix(string(b), "tls=true") || resp.TLS.PeerCertificates[0].Issuer.CommonName != tc.issuer {
					t.Fatalf("answer %q, issuer %q, want %q", b, resp.TLS.PeerCertificates[0].Issuer.CommonName, tc.issuer)
				}
				tr.CloseIdleConnections() // the second one through a new tunnel
			}
		})
	}
}

// TestSSLForwardProxyHTTPVirtual: an http virtual with the forward proxy
// serves a client trusting only the proxy's CA: the member's names on a
// certificate of the CA, the requests in plaintext to the HTTP engine
// (and its rules) and on to the member over TLS; a bypassed name goes
// through untouched, the member's own certificate shown.
func TestSSLForwardProxyHTTPVirtual(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, memberRoots := testCert(t, "www.origin.test", "bank.origin.test")
	startBothServer(t, "127.25.1.31:443", mcert, mkey)
	// A member that asks for a client certificate.
	pair, err := tlsprof.Pair("m3", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.25.1.33:443", &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls=%v certs=%d", r.TLS != nil, len(r.TLS.PeerCertificates))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rule := `when HTTP_REQUEST { if { [HTTP::uri] eq "/rule" } { HTTP::respond 200 content "rule saw [HTTP::host][HTTP::uri]" } }`
	for _, tc := range []struct {
		name, host, path string
		bypass           *sslfwd.Bypass
		roots            *x509.CertPool
		issuer, body     string
		member           string // "": 127.25.1.31:443
		on               sslfwd.Config
	}{
		{name: "intercepted", host: "www.origin.test", path: "/a", roots: proxyRoots, issuer: "Proxy CA", body: "tls=true"},
		{name: "rule on the plaintext", host: "www.origin.test", path: "/rule", roots: proxyRoots, issuer: "Proxy CA", body: "rule saw www.origin.test/rule"},
		{name: "bypassed", host: "bank.origin.test", path: "/b", bypass: &sslfwd.Bypass{HostBypass: []string{"bank.origin.test"}}, roots: memberRoots, issuer: "www.origin.test", body: "tls=true"},
		{name: "bypassed: the rule does not see it", host: "bank.origin.test", path: "/rule", bypass: &sslfwd.Bypass{HostBypass: []string{"bank.origin.test"}}, roots: memberRoots, issuer: "www.origin.test", body: "tls=true"},
		{name: "client certificate requested: bypassed", host: "www.origin.test", path: "/rule", roots: memberRoots, issuer: "www.origin.test", body: "tls=true certs=0",
			member: "127.25.1.33:443", on: sslfwd.Config{BypassOnCertRequest: true}},
		{name: "client certificate requested: intercepted", host: "www.origin.test", path: "/c", roots: proxyRoots, issuer: "Proxy CA", body: "tls=true certs=0",
			member: "127.25.1.33:443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			member := tc.member
			if member == "" {
				member = "127.25.1.31:443"
			}
			cfg := l7Config(t, "127.25.1.30:443", false, mblb.HTTPOptions{}, rule, member)
			cfg.Virtuals["/Common/vs"].TLS = forwardTLS(t, proxyCA, proxyKey, tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1}, tc.bypass, tc.on)
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tc.roots, ServerName: tc.host},
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", "127.25.1.30:443")
				}}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for i := 0; i < 2; i++ { // two requests on one connection
				resp, err := client.Get("https://" + tc.host + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.HasPrefix(string(b), tc.body) || resp.TLS.PeerCertificates[0].Issuer.CommonName != tc.issuer {
					t.Fatalf("answer %q, issuer %q, want %q from %q", b, resp.TLS.PeerCertificates[0].Issuer.CommonName, tc.body, tc.issuer)
				}
			}
		})
	}
}
