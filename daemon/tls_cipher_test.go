package daemon

import (
	"crypto/tls"
	"strings"
	"testing"
)

// TestCipherGroupDHGroups: a cipher rule's dh-groups, set from tmsh,
// decide the key exchange of the virtual whose client-ssl profile uses
// the rule's group, with no "not acted on" warning; show ltm cipher
// group prints the group in its ordering; a bad group is refused and
// changes nothing.
func TestCipherGroupDHGroups(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	labelServer(t, "127.113.20.11:9000", "S1 Response")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create ltm pool p members add { 127.113.20.11:9000 }",
	)
	out, err := run(t, s, "create ltm cipher rule r384 cipher ECDHE:TLS13 dh-groups P384")
	if err != "" || strings.Contains(out, "not acted on") {
		t.Fatalf("create ltm cipher rule: %q %q", out, err)
	}
	out, err = run(t, s, "create ltm cipher group g384 allow replace-all-with { r384 { } } ordering strength")
	if err != "" || strings.Contains(out, "not acted on") {
		t.Fatalf("create ltm cipher group: %q %q", out, err)
	}
	mustRun(t, s,
		"create ltm profile client-ssl g_ssl cert-key-chain replace-all-with { app { cert app.crt key app.key } } cipher-group g384 ciphers none",
		"create ltm virtual vs destination 127.113.20.10:443 pool p profiles replace-all-with { tcp g_ssl }")
	for _, tc := range []struct {
		name   string
		curves []tls.CurveID
		ok     bool
	}{
		{"P-384 offered", []tls.CurveID{tls.X25519, tls.CurveP384}, true},
		{"P-384 not offered", []tls.CurveID{tls.X25519, tls.CurveP256}, false},
	} {
		cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example", CurvePreferences: tc.curves}
		got, cs, err := tlsLine("127.113.20.10:443", cfg)
		if tc.ok && (err != nil || got != "S1 Response" || cs.CurveID != tls.CurveP384) {
			t.Errorf("%s: %q %v %v", tc.name, got, err, cs.CurveID)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: served (%v)", tc.name, cs.CurveID)
		}
	}
	out, err = run(t, s, "show ltm cipher group g384")
	if err != "" || !strings.Contains(out, "Ordering   strength") || !strings.Contains(out, "DH Groups  P384") || !strings.Contains(out, "  1  ") {
		t.Errorf("show ltm cipher group:\n%s%s", out, err)
	}
	for _, cmd := range []string{
		"modify ltm cipher rule r384 dh-groups P384:P999",
		"modify ltm cipher rule r384 dh-groups FFDHE2048",
		"modify ltm cipher group g384 ordering quickest",
	} {
		if _, err := run(t, s, cmd); err == "" {
			t.Errorf("%s: accepted", cmd)
		}
	}
	if out, _ := run(t, s, "list ltm cipher rule r384 dh-groups"); !strings.Contains(out, "dh-groups P384") {
		t.Errorf("after refused changes:\n%s", out)
	}
}
