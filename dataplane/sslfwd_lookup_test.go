package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// cert-lookup-by-ipaddr-port on an http virtual with the SSL forward
// proxy: a client whose hello names no server is answered with the
// certificate last forged for the origin's address and port, without
// the handshake that fetches the origin's certificate; a hello with a
// name, or the setting disabled, costs that handshake each time. The
// origin counts the hellos it receives.
func TestSSLForwardProxyLookupByAddr(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, _ := testCert(t, "www.origin.test")
	pair, err := tlsprof.Pair("origin", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hellos atomic.Int32
	ln, err := tls.Listen("tcp", "127.85.2.11:443", &tls.Config{Certificates: []tls.Certificate{pair},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { hellos.Add(1); return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "origin "+r.URL.Path) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	// get makes one connection and request; sni "" sends no server name.
	// The certificate shown must be the proxy CA's, for the origin.
	get := func(vs, sni string) string {
		t.Helper()
		tc := &tls.Config{ServerName: sni, RootCAs: proxyRoots}
		if sni == "" {
			tc.InsecureSkipVerify = true // no name to check: the chain is checked below
		}
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, tc)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer c.Close()
		leaf := c.ConnectionState().PeerCertificates[0]
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: proxyRoots}); err != nil || leaf.Subject.CommonName != "www.origin.test" {
			t.Fatalf("shown %q issued by %q: %v", leaf.Subject.CommonName, leaf.Issuer.CommonName, err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: www.origin.test\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(c)
		return string(b)
	}
	for i, tc := range []struct {
		name   string
		lookup bool
		sni    string
		want   int32 // the origin's hellos for three clients
	}{
		{"enabled, no server name: one fetch", true, "", 1 + 3},
		{"enabled, a server name: a fetch each", true, "www.origin.test", 3 + 3},
		{"disabled, no server name: a fetch each", false, "", 3 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.85.2.%d:443", i+1)
			def, defKey, _ := testCert(t, "default.example")
			tt := clientSSL(t, def, defKey)
			if tt.Server, err = (&tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1}).Build(); err != nil {
				t.Fatal(err)
			}
			if tt.Forward, err = sslfwd.New(sslfwd.Config{Name: "/Common/fwd", CA: proxyCA.Certs[0], CAKey: proxyKey.Signer,
				Client: tt.ClientBuilt[0].Config, LookupByAddr: tc.lookup}); err != nil {
				t.Fatal(err)
			}
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, "", "127.85.2.11:443")
			cfg.Virtuals["/Common/vs"].TLS = tt
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			before := hellos.Load()
			for range 3 {
				if got := get(vs, tc.sni); !strings.Contains(got, "200 OK") || !strings.HasSuffix(got, "origin /x") {
					t.Fatalf("answer %q", got)
				}
			}
			// The last member connection's hello may be counted a moment
			// after its answer was relayed: wait for it, bounded.
			for end := time.Now().Add(5 * time.Second); hellos.Load()-before < tc.want && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			if got := hellos.Load() - before; got != tc.want {
				t.Fatalf("the origin saw %d hellos, want %d", got, tc.want)
			}
		})
	}
}
