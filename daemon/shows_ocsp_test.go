package daemon

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
)

// TestShowOCSPStaplingResponses: show ltm clientssl ocsp-stapling-responses
// lists what each stapling client-ssl profile of a running virtual
// staples: the certificate, its validator and responder, the status,
// this and next update, when it came, when it expires and is renewed
// (cache-timeout before next update); a profile without
// stapling, or on no virtual, is not listed; an unknown profile is
// refused.
func TestShowOCSPStaplingResponses(t *testing.T) {
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	r := pki.ocspResponder(t, "127.245.3.9:0", ocspGood("app.example", pki.serial), "", "")
	labelServer(t, "127.245.3.11:9000", "S1")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create sys crypto cert-validator ocsp v responder-url "+r.URL()+" cache-timeout 300",
		"modify sys file ssl-cert app.crt cert-validators replace-all-with { v } cert-validation-options { ocsp } issuer-cert ca.crt",
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm profile client-ssl plain cert-key-chain replace-all-with { app { cert app.crt key app.key } }",
		"create ltm profile client-ssl unused cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm pool p members add { 127.245.3.11:9000 }",
		"create ltm virtual vs1 destination 127.245.3.1:443 pool p profiles replace-all-with { tcp stapled }",
		"create ltm virtual vs2 destination 127.245.3.2:443 pool p profiles replace-all-with { tcp stapled }",
		"create ltm virtual vs3 destination 127.245.3.3:443 pool p profiles replace-all-with { tcp plain }",
	)
	waitStaple(t, "127.245.3.1:443", &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}, true)
	out, errOut := run(t, s, "show ltm clientssl ocsp-stapling-responses")
	if errOut != "" {
		t.Fatal(errOut)
	}
	for _, want := range []string{
		"Ltm::ClientSSL OCSP Stapling Response: stapled app.crt\n",
		"  Virtual Servers     vs1 vs2\n",
		"  Subject             CN=app.example,O=Example\n",
		fmt.Sprintf("  Serial Number       %X\n", pki.serial),
		"  Validator           cert-validator /Common/v\n",
		"  Responder           " + r.URL() + "\n",
		"  Status              good\n",
		"  Last Error          none\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "Ltm::ClientSSL OCSP Stapling Response:") != 1 || strings.Contains(out, "plain") || strings.Contains(out, "unused") {
		t.Errorf("only the stapling profile on a virtual is listed:\n%s", out)
	}
	dates := map[string]time.Time{}
	for _, l := range strings.Split(out, "\n") {
		for _, k := range []string{"This Update", "Next Update", "Fetched", "Expires", "Renewal"} {
			if v, ok := strings.CutPrefix(l, "  "+k); ok {
				tm, err := time.Parse("2006-01-02 15:04:05 MST", strings.TrimSpace(v))
				if err != nil {
					t.Errorf("%s: %v", k, err)
				}
				dates[k] = tm
			}
		}
	}
	// openssl's answer: this update now, next update ten minutes on;
	// cache-timeout 300 is sooner, so the answer expires at 300 s and is
	// renewed half-way.
	f := dates["Fetched"]
	if time.Since(f) > time.Minute || dates["This Update"].After(f.Add(time.Minute)) || dates["Next Update"].Sub(dates["This Update"]) < 9*time.Minute ||
		dates["Expires"].Sub(f) != 300*time.Second || dates["Renewal"].Sub(f) != 150*time.Second {
		t.Errorf("dates: %v\n%s", dates, out)
	}
	if out, errOut := run(t, s, "show ltm clientssl ocsp-stapling-responses stapled"); errOut != "" || !strings.Contains(out, "Status              good") {
		t.Errorf("by name: %s\n%s", errOut, out)
	}
	if out, errOut := run(t, s, "show ltm clientssl ocsp-stapling-responses plain"); errOut != "" || out != "" {
		t.Errorf("a profile without stapling: %q %q", errOut, out)
	}
	if _, errOut := run(t, s, "show ltm clientssl ocsp-stapling-responses nosuch"); !strings.Contains(errOut, "/Common/nosuch") {
		t.Errorf("an unknown profile: %q", errOut)
	}
}
