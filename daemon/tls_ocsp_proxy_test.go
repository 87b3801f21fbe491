package daemon

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
)

// TestOCSPProxyServerPoolValidator: a validator whose responder's name
// only an HTTP proxy can resolve staples once its proxy-server-pool
// names a pool with that proxy as member (no warning: it is acted on),
// the requests going through the proxy; a pool that does not exist is
// refused, as is deleting the pool in use, and neither changes anything.
func TestOCSPProxyServerPoolValidator(t *testing.T) {
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	appSerial := pki.serial
	signer, signerKey := pki.leaf(t, "signer", "signer.example", false)
	r := pki.ocspResponder(t, "127.36.41.9:0", ocspGood("app.example", appSerial), signer, signerKey)
	_, port, _ := net.SplitHostPort(r.Addr())
	var forwarded atomic.Int32
	proxy := forwardProxy(t, "127.36.41.20:0", "ocsp.openltm.test", "127.36.41.9", &forwarded)
	labelServer(t, "127.36.41.11:9000", "S1")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert signer.crt from-local-file "+signer,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create ltm pool p members add { 127.36.41.11:9000 }",
		"create ltm pool proxies members add { "+proxy+" }",
		"create sys crypto cert-validator ocsp v responder-url http://ocsp.openltm.test:"+port+" trusted-responders signer.crt cache-error-timeout 1",
		"modify sys file ssl-cert app.crt cert-validators replace-all-with { v } cert-validation-options { ocsp } issuer-cert ca.crt",
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm virtual vs destination 127.36.41.1:443 pool p profiles replace-all-with { tcp stapled }",
	)
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	staple := func(want bool) { t.Helper(); waitStaple(t, "127.36.41.1:443", cfg, want) }
	staple(false) // the system's resolver does not know the name
	out, errOut := run(t, s, "modify sys crypto cert-validator ocsp v proxy-server-pool proxies")
	if errOut != "" || strings.Contains(out, "not acted on") || strings.Contains(out, "does not act on") {
		t.Fatalf("proxy-server-pool: %s\n%s", errOut, out)
	}
	staple(true)
	if forwarded.Load() == 0 {
		t.Fatal("stapled, but the proxy forwarded no request")
	}
	if out, errOut := run(t, s, "modify sys crypto cert-validator ocsp v proxy-server-pool nosuch"); !strings.Contains(errOut, "nosuch") {
		t.Fatalf("a pool that does not exist: %q\n%s", errOut, out)
	}
	if out, errOut := run(t, s, "delete ltm pool proxies"); !strings.Contains(errOut, "in use") {
		t.Fatalf("deleting the validator's pool: %q\n%s", errOut, out)
	}
	if out, _ := run(t, s, "list sys crypto cert-validator ocsp v proxy-server-pool"); !strings.Contains(out, "proxy-server-pool proxies") {
		t.Fatalf("list:\n%s", out)
	}
}

// forwardProxy runs an HTTP proxy for absolute-URL requests at addr,
// which knows one host name (name, at ip), and counts what it forwarded.
func forwardProxy(t *testing.T, addr, name, ip string, forwarded *atomic.Int32) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() || r.URL.Hostname() != name {
			http.Error(w, "unknown host", http.StatusBadGateway)
			return
		}
		forwarded.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Host = net.JoinHostPort(ip, r.URL.Port())
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
