//go:build linux

package dataplane

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestTLSRuleKeyLogLoop: an HTTP virtual with client-ssl only serves its
// TLS clients on the event loops; its rules read the same key log, SNI
// and ALPN there as on the goroutine front stage (TestTLSRuleKeyLogHTTP),
// in CLIENTSSL_HANDSHAKE (on the handshake's goroutine) and in
// HTTP_REQUEST (on the loop), for TLS 1.2 and 1.3, each equal to the
// client's own key log.
func TestTLSRuleKeyLogLoop(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startL7Member(t, "127.0.245.40:80", "M1")
	for i, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tlsprof.VersionName(version), func(t *testing.T) {
			vs := fmt.Sprintf("127.0.245.%d:443", 41+i)
			var clientKeys syncBuf
			p, _ := newPlane(t)
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, "", "127.0.245.40:80")
			rs, lg := compileRules(t, keyLogRule+keyLogHTTPRule)
			lg.showOnFailure(t)
			cfg.Virtuals["/Common/vs"].Rules = rs
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			cfg.Virtuals["/Common/vs"].TLS.Client = tlsprof.WithALPN(cfg.Virtuals["/Common/vs"].TLS.Client, "http/1.1")
			mustApply(t, p, cfg)
			onLoop := false
			resp := keyLogRequest(t, vs, version, roots, &clientKeys, func() { onLoop = loopsBusy(p) })
			if !onLoop {
				t.Fatal("the client is not served on an event loop")
			}
			checkKeyLogAnswer(t, resp, &clientKeys, "www.example/http/1.1")
			keys, other := ruleLines(lg, "CLIENTSSL_HANDSHAKE")
			if want := clientKeys.lines(); !slices.Equal(keys, want) {
				t.Fatalf("CLIENTSSL_HANDSHAKE's key log\n%s\nthe client's\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			if want := []string{"sni=www.example alpn=http/1.1"}; !slices.Equal(other, want) {
				t.Fatalf("CLIENTSSL_HANDSHAKE: %q, want %q", other, want)
			}
		})
	}
}
