package daemon

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
)

// TestClientSSLOCSPStapling: a client-ssl profile with ocsp-stapling,
// its certificate naming an OCSP cert-validator, staples openssl's
// answer on every kind of virtual (standard on the loops, standard with
// a TLS rule, HTTP); a Go client reads it from the handshake. A profile
// without stapling sends none.
func TestClientSSLOCSPStapling(t *testing.T) {
	s, pki, _ := staplingSetup(t, "127.13.22")
	mustRun(t, s,
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm profile client-ssl plain cert-key-chain replace-all-with { app { cert app.crt key app.key } }",
		"create ltm pool p members add { 127.13.22.11:9000 }",
		"create ltm rule tlsrule { when CLIENTSSL_HANDSHAKE { set x 1 } }",
		"create ltm virtual loop_vs destination 127.13.22.1:443 pool p profiles replace-all-with { tcp stapled }",
		"create ltm virtual rule_vs destination 127.13.22.2:443 pool p rules { tlsrule } profiles replace-all-with { tcp stapled }",
		"create ltm virtual http_vs destination 127.13.22.3:443 pool p profiles replace-all-with { tcp http stapled }",
		"create ltm virtual plain_vs destination 127.13.22.4:443 pool p profiles replace-all-with { tcp plain }",
		"create ltm virtual h2_vs destination 127.13.22.5:443 pool p profiles replace-all-with { tcp http http2 stapled }",
	)
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example", NextProtos: []string{"h2", "http/1.1"}}
	for _, tc := range []struct {
		name, addr string
		stapled    bool
	}{
		{"standard, event loops", "127.13.22.1:443", true},
		{"standard, TLS rule", "127.13.22.2:443", true},
		{"http", "127.13.22.3:443", true},
		{"no stapling", "127.13.22.4:443", false},
		{"http2 (ALPN h2)", "127.13.22.5:443", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs tls.ConnectionState
			for i := 0; i < 50; i++ { // the first exchange starts at commit
				c, err := tls.DialWithDialer(clientDialer, "tcp", tc.addr, cfg)
				if err == nil && strings.HasPrefix(tc.name, "http2") && c.ConnectionState().NegotiatedProtocol != "h2" {
					t.Fatalf("ALPN chose %q", c.ConnectionState().NegotiatedProtocol)
				}
				if err != nil {
					t.Fatal(err)
				}
				cs = c.ConnectionState()
				c.Close()
				if len(cs.OCSPResponse) > 0 || !tc.stapled && i == 2 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !tc.stapled {
				if len(cs.OCSPResponse) != 0 {
					t.Fatalf("stapled %d bytes without ocsp-stapling", len(cs.OCSPResponse))
				}
				return
			}
			resp, err := ocsp.ParseResponseForCert(cs.OCSPResponse, cs.PeerCertificates[0], pki.ca)
			if err != nil || resp.Status != ocsp.Good {
				t.Fatalf("staple: %v (status %v, %d bytes)", err, resp, len(cs.OCSPResponse))
			}
		})
	}
	if out, _ := run(t, s, "list ltm profile client-ssl stapled"); !strings.Contains(out, "ocsp-stapling enabled") {
		t.Fatalf("list:\n%s", out)
	}
}
