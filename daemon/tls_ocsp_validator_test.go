package daemon

import (
	"bytes"
	"crypto/tls"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
)

// TestOCSPValidatorSettings: a validator's strict-resp-cert-check,
// status-age and concurrent-connections-limit are acted on (no warning)
// and reach the exchanges: openssl's responder signs with a certificate
// of the CA that is not marked for OCSP signing, listed in
// trusted-responders; its answers are stapled until
// strict-resp-cert-check enabled refuses them. Bad values are refused and
// change nothing.
func TestOCSPValidatorSettings(t *testing.T) {
	t.Parallel()
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	appSerial := pki.serial
	signer, signerKey := pki.leaf(t, "signer", "signer.example", false) // server auth, not OCSP signing
	r := pki.ocspResponder(t, "127.13.28.9:0", ocspGood("app.example", appSerial), signer, signerKey)
	labelServer(t, "127.13.28.11:9000", "S1")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert signer.crt from-local-file "+signer,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create ltm pool p members add { 127.13.28.11:9000 }",
	)
	out, errOut := run(t, s, "create sys crypto cert-validator ocsp v responder-url "+r.URL()+" trusted-responders signer.crt status-age 600 concurrent-connections-limit 4 cache-error-timeout 1")
	if errOut != "" || strings.Contains(out, "not acted on") || strings.Contains(out, "does not act on") {
		t.Fatalf("create: %s\n%s", errOut, out)
	}
	mustRun(t, s,
		"modify sys file ssl-cert app.crt cert-validators replace-all-with { v } cert-validation-options { ocsp } issuer-cert ca.crt",
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm virtual vs destination 127.13.28.1:443 pool p profiles replace-all-with { tcp stapled }",
	)
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	staple := func(want bool) { t.Helper(); waitStaple(t, "127.13.28.1:443", cfg, want) }
	staple(true)
	mustRun(t, s, "modify sys crypto cert-validator ocsp v strict-resp-cert-check enabled")
	staple(false)
	mustRun(t, s, "modify sys crypto cert-validator ocsp v strict-resp-cert-check disabled")
	staple(true)
	for _, bad := range []string{"status-age soon", "concurrent-connections-limit many", "strict-resp-cert-check maybe"} {
		if out, err := run(t, s, "modify sys crypto cert-validator ocsp v "+bad); err == "" {
			t.Errorf("%s accepted:\n%s", bad, out)
		}
	}
	if out, _ := run(t, s, "list sys crypto cert-validator ocsp v status-age concurrent-connections-limit"); !strings.Contains(out, "status-age 600") || !strings.Contains(out, "concurrent-connections-limit 4") {
		t.Fatalf("list:\n%s", out)
	}

	// dns-resolver: the responder named by a host only the resolver's
	// nameserver knows. Without it the name does not resolve: no staple.
	ns, _ := startDNS(t, "127.13.28.53", map[string][]string{"ocsp.openltm.test": {"127.13.28.9"}})
	_, port, _ := net.SplitHostPort(r.Addr())
	mustRun(t, s,
		"create net dns-resolver r1 forward-zones { . { nameservers { "+ns+" { } } } }",
		"create sys crypto cert-validator ocsp named responder-url http://ocsp.openltm.test:"+port+" trusted-responders signer.crt cache-error-timeout 1",
		"modify sys file ssl-cert app.crt cert-validators replace-all-with { named }",
	)
	staple(false)
	out, errOut = run(t, s, "modify sys crypto cert-validator ocsp named dns-resolver r1")
	if errOut != "" || strings.Contains(out, "does not act on") {
		t.Fatalf("dns-resolver: %s\n%s", errOut, out)
	}
	staple(true)
	if out, errOut := run(t, s, "modify sys crypto cert-validator ocsp named dns-resolver nosuch"); !strings.Contains(errOut, "nosuch") {
		t.Fatalf("a dns-resolver that does not exist: %q\n%s", errOut, out)
	}
	if out, _ := run(t, s, "list sys crypto cert-validator ocsp named dns-resolver"); !strings.Contains(out, "dns-resolver r1") {
		t.Fatalf("list:\n%s", out)
	}

	// signer-cert and signer-key: the requests are signed (openssl
	// answers them as before); one without the other, or a key that is
	// not the certificate's, is refused.
	mustRun(t, s,
		"install sys crypto cert app2.crt from-local-file "+crt,
		"install sys crypto key signer.key from-local-file "+signerKey,
	)
	for _, bad := range []string{"signer-cert app2.crt", "signer-cert app2.crt signer-key signer.key"} {
		if out, errOut := run(t, s, "modify sys crypto cert-validator ocsp named "+bad); errOut == "" {
			t.Fatalf("%s accepted:\n%s", bad, out)
		}
	}
	out, errOut = run(t, s, "modify sys crypto cert-validator ocsp named signer-cert signer.crt signer-key signer.key")
	if errOut != "" || strings.Contains(out, "does not act on") {
		t.Fatalf("signer: %s\n%s", errOut, out)
	}
	before := r.Requests()
	staple(true)
	for i := 0; i < 50 && r.Requests() == before; i++ { // the new validator's first exchange
		time.Sleep(50 * time.Millisecond)
	}
	if req := r.LastRequest(); !bytes.Contains(req, []byte("signer.example")) {
		t.Fatalf("the last request does not name the signer (%d bytes)", len(req))
	}
}

// waitStaple dials addr until its handshakes carry an OCSP staple (want)
// or, ten tries on, still carry none (!want): a validator's exchange
// starts at commit and its answer comes a moment later.
func waitStaple(t *testing.T, addr string, cfg *tls.Config, want bool) {
	t.Helper()
	n := 0
	for i := 0; i < 50; i++ {
		c, err := tls.DialWithDialer(clientDialer, "tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		n = len(c.ConnectionState().OCSPResponse)
		c.Close()
		if (n > 0) == want && (want || i >= 10) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s stapled %d bytes, want a staple: %v", addr, n, want)
}
