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
	s, pki, r := staplingSetup(t, "127.245.3")
	mustRun(t, s,
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

// TestShowOCSPFieldFmt: show ltm clientssl ocsp-stapling-responses
// field-fmt gives the same facts as key-value lines, one block per
// profile with its answers nested by certificate; raw is taken (no
// counters to scale); another show option is refused.
func TestShowOCSPFieldFmt(t *testing.T) {
	s, pki, r := staplingSetup(t, "127.248.3")
	mustRun(t, s,
		"create ltm profile client-ssl stapled cert-key-chain replace-all-with { app { cert app.crt key app.key } } ocsp-stapling enabled",
		"create ltm pool p members add { 127.248.3.11:9000 }",
		"create ltm virtual vs1 destination 127.248.3.1:443 pool p profiles replace-all-with { tcp stapled }",
	)
	waitStaple(t, "127.248.3.1:443", &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}, true)
	for _, cmd := range []string{"show ltm clientssl ocsp-stapling-responses field-fmt", "show ltm clientssl ocsp-stapling-responses stapled field-fmt raw"} {
		out, errOut := run(t, s, cmd)
		if errOut != "" {
			t.Fatalf("%s: %s", cmd, errOut)
		}
		for _, want := range []string{
			"ltm clientssl ocsp-stapling-responses stapled {\n",
			"    certificates {\n        app.crt {\n",
			"            cert app.crt\n",
			"            last-error none\n",
			"            responder " + r.URL() + "\n",
			fmt.Sprintf("            serial-number %X\n", pki.serial),
			"            status good\n",
			"            subject CN=app.example,O=Example\n",
			"            validator v\n",
			"            validator-kind cert-validator\n",
			"    virtual-servers vs1\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: want %q in\n%s", cmd, want, out)
			}
		}
		for _, k := range []string{"this-update", "next-update", "fetched", "expires", "renewal"} {
			i := strings.Index(out, "            "+k+" ")
			if i < 0 {
				t.Fatalf("%s: no %s in\n%s", cmd, k, out)
			}
			v, _, _ := strings.Cut(out[i+len(k)+13:], "\n")
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				t.Errorf("%s: %s %q: %v", cmd, k, v, err)
			}
		}
	}
	if _, errOut := run(t, s, "show ltm clientssl ocsp-stapling-responses members"); !strings.Contains(errOut, `"members" is not an option`) {
		t.Errorf("members: %q", errOut)
	}
}

// TestShowServerSSLOCSPResponses: show ltm serverssl ocsp-responses lists
// the answers a server-ssl profile's ocsp checked its members'
// certificates by (openssl's responder: one good, one revoked that
// revoked-cert-status-response-control ignore lets through), with the
// virtual servers using the profile and the member that presented each
// certificate, in the table and in field-fmt; a
// profile without ocsp lists nothing; an unknown profile is refused.
func TestShowServerSSLOCSPResponses(t *testing.T) {
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	pki := newTestPKI(t)
	now := time.Now()
	gcrt, gkey, gserial := pki.issue(t, "good", "member-good.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	rcrt, rkey, rserial := pki.issue(t, "revoked", "member-revoked.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	index := ocspGood("member-good.example", gserial.Int64()) +
		fmt.Sprintf("R\t%s\t%s\t%X\tunknown\t/CN=member-revoked.example\n", now.Add(24*time.Hour).UTC().Format("060102150405Z"), now.Add(-time.Minute).UTC().Format("060102150405Z"), rserial)
	r := pki.ocspResponder(t, "127.248.4.9:0", index, "", "")
	tlsLabelMember(t, "127.248.4.11:8443", gcrt, gkey, "good member")
	tlsLabelMember(t, "127.248.4.12:8443", rcrt, rkey, "revoked member")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"create sys crypto cert-validator ocsp v responder-url "+r.URL(),
		"create ltm profile server-ssl checked ocsp v ca-file ca.crt revoked-cert-status-response-control ignore",
		"create ltm profile server-ssl plain ca-file ca.crt",
		"create ltm pool good members add { 127.248.4.11:8443 }",
		"create ltm pool revoked members add { 127.248.4.12:8443 }",
		"create ltm virtual vs_good destination 127.248.4.1:80 pool good profiles replace-all-with { tcp checked }",
		"create ltm virtual vs_revoked destination 127.248.4.2:80 pool revoked profiles replace-all-with { tcp checked }",
		"create ltm virtual vs_plain destination 127.248.4.3:80 pool good profiles replace-all-with { tcp plain }",
	)
	if out, errOut := run(t, s, "show ltm serverssl ocsp-responses"); errOut != "" || out != "" {
		t.Fatalf("before any member handshake: %q %q", out, errOut)
	}
	for addr, want := range map[string]string{"127.248.4.1:80": "good member", "127.248.4.2:80": "revoked member", "127.248.4.3:80": "good member"} {
		if got := askVS(t, addr, "hello"); got != want {
			t.Fatalf("%s: %q, want %q", addr, got, want)
		}
	}
	out, errOut := run(t, s, "show ltm serverssl ocsp-responses")
	if errOut != "" {
		t.Fatal(errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("Ltm::ServerSSL OCSP Response: checked %X\n", gserial),
		fmt.Sprintf("Ltm::ServerSSL OCSP Response: checked %X\n", rserial),
		"  Virtual Servers     vs_good vs_revoked\n",
		"  Subject             CN=member-good.example\n",
		"  Subject             CN=member-revoked.example\n",
		"  Validator           cert-validator /Common/v\n",
		"  Responder           " + r.URL() + "\n",
		"  Status              good\n",
		"  Status              revoked\n",
		"  Members             127.248.4.11:8443\n",
		"  Members             127.248.4.12:8443\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "Ltm::ServerSSL OCSP Response:") != 2 || strings.Contains(out, "plain") {
		t.Errorf("two answers of the profile with ocsp only:\n%s", out)
	}
	out, errOut = run(t, s, "show ltm serverssl ocsp-responses checked field-fmt")
	if errOut != "" {
		t.Fatal(errOut)
	}
	for _, want := range []string{
		"ltm serverssl ocsp-responses checked {\n",
		fmt.Sprintf("        %X {\n", gserial),
		"            status revoked\n",
		"            members 127.248.4.12:8443\n",
		"            subject CN=member-good.example\n",
		"    virtual-servers vs_good vs_revoked\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("field-fmt: want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "            cert ") {
		t.Errorf("field-fmt: a member's certificate has no sys file ssl-cert:\n%s", out)
	}
	if out, errOut := run(t, s, "show ltm serverssl ocsp-responses plain"); errOut != "" || out != "" {
		t.Errorf("a profile without ocsp: %q %q", errOut, out)
	}
	if _, errOut := run(t, s, "show ltm serverssl ocsp-responses nosuch"); !strings.Contains(errOut, "/Common/nosuch") {
		t.Errorf("an unknown profile: %q", errOut)
	}
}
