package daemon

import (
	"crypto/tls"
	"strings"
	"testing"
)

// TestSSLFilesInUse: the certificates and keys a client-ssl profile's
// cert-key-chain names (cert, key and chain), a server-ssl profile's cert,
// key, ca-file and crl-file and an https monitor's cert and key are
// references: a delete while they are used is refused with BIG-IP's in-use
// error and changes nothing (the TLS virtual goes on serving with them), a
// profile or a loaded file naming one that does not exist is refused, and
// once nothing uses them they can be deleted.
func TestSSLFilesInUse(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	labelServer(t, "127.18.1.11:9000", "S1 Response")
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"install sys crypto cert ca.crt from-local-file "+pki.dir+"/ca.crt",
		"install sys crypto cert mon.crt from-local-file "+crt,
		"install sys crypto key mon.key from-local-file "+key,
		"install sys crypto cert ss.crt from-local-file "+crt,
		"install sys crypto cert ssca.crt from-local-file "+pki.dir+"/ca.crt",
		"install sys crypto crl ss.crl from-local-file "+pki.crl(t, "ca"),
		"install sys crypto key ss.key from-local-file "+key,
		"create ltm profile client-ssl cs cert-key-chain replace-all-with { app { cert app.crt key app.key chain ca.crt } }",
		"create ltm profile server-ssl ss cert ss.crt key ss.key ca-file ssca.crt crl-file ss.crl",
		"create ltm monitor https hm cert mon.crt key mon.key",
		"create ltm pool p members add { 127.18.1.11:9000 }",
		"create ltm virtual vs destination 127.18.1.10:443 pool p profiles replace-all-with { tcp cs { context clientside } }",
	)
	listed, _ := run(t, s, "list ltm profile client-ssl cs cert-key-chain")
	if !strings.Contains(listed, "app {") || !strings.Contains(listed, "cert app.crt") || !strings.Contains(listed, "key app.key") || !strings.Contains(listed, "chain ca.crt") {
		t.Fatalf("list cert-key-chain:\n%s", listed)
	}
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	for _, tc := range []struct{ cmd, err string }{
		{"delete sys file ssl-key app.key", "01070265:3: The Key (/Common/app.key) cannot be deleted because it is in use by a Profile (/Common/cs)."},
		{"delete sys file ssl-cert app.crt", "01070265:3: The Certificate (/Common/app.crt) cannot be deleted because it is in use by a Profile (/Common/cs)."},
		{"delete sys file ssl-cert ca.crt", "01070265:3: The Certificate (/Common/ca.crt) cannot be deleted because it is in use by a Profile (/Common/cs)."},
		{"delete sys file ssl-cert ss.crt", "(/Common/ss.crt) cannot be deleted because it is in use by a Profile (/Common/ss)."},
		{"delete sys file ssl-key ss.key", "(/Common/ss.key) cannot be deleted because it is in use by a Profile (/Common/ss)."},
		{"delete sys file ssl-cert ssca.crt", "(/Common/ssca.crt) cannot be deleted because it is in use by a Profile (/Common/ss)."},
		{"delete sys file ssl-crl ss.crl", "(/Common/ss.crl) cannot be deleted because it is in use by a Profile (/Common/ss)."},
		{"delete sys file ssl-cert mon.crt", "(/Common/mon.crt) cannot be deleted because it is in use by a"},
		{"delete sys file ssl-key mon.key", "(/Common/mon.key) cannot be deleted because it is in use by a"},
		{"modify ltm profile client-ssl cs cert-key-chain replace-all-with { app { cert app.crt key nosuch.key } }", "01020036:3: The requested key (/Common/nosuch.key) was not found."},
		{"modify ltm profile client-ssl cs cert-key-chain replace-all-with { app { cert app.crt key app.key chain nosuch.crt } }", "01020036:3: The requested certificate (/Common/nosuch.crt) was not found."},
		{"create ltm profile client-ssl cs2 cert-key-chain replace-all-with { a { cert /Common/nosuch.crt key app.key } }", "01020036:3: The requested certificate (/Common/nosuch.crt) was not found."},
		{"create ltm profile server-ssl ss2 ca-file nosuch.crt", "01020036:3: The requested certificate (/Common/nosuch.crt) was not found."},
		{"load:ltm profile client-ssl /Common/cs3 {\n    cert-key-chain {\n        x {\n            cert /Common/app.crt\n            key /Common/gone.key\n        }\n    }\n}\n", "The requested key (/Common/gone.key) was not found."},
		{"load:ltm profile client-ssl /Common/cs4 {\n    cert-key-chain {\n        x {\n            cert /Common/app.crt\n            key /Common/app.key\n        }\n    }\n}\n", ""},
		{"delete sys file ssl-key app.key", "cannot be deleted because it is in use"},
	} {
		if got := runOrLoad(t, s, dir, tc.cmd); (tc.err == "") != (got == "") || !strings.Contains(got, tc.err) {
			t.Errorf("%s:\n error %q\n want  %q", tc.cmd, got, tc.err)
		}
		if got, _, err := tlsLine("127.18.1.10:443", cfg); err != nil || got != "S1 Response" {
			t.Fatalf("after %s: the TLS virtual answers %q %v", tc.cmd, got, err)
		}
	}
	if again, _ := run(t, s, "list ltm profile client-ssl cs cert-key-chain"); again != listed {
		t.Errorf("the refused changes changed the chain:\n%s\nwas\n%s", again, listed)
	}
	for _, cmd := range []string{"cs3", "cs2"} {
		if _, err := run(t, s, "list ltm profile client-ssl "+cmd); err == "" {
			t.Errorf("the refused profile %s exists", cmd)
		}
	}
	// Once nothing uses them, they go.
	mustRun(t, s,
		"delete ltm virtual vs",
		"delete ltm profile client-ssl cs cs4",
		"delete ltm profile server-ssl ss",
		"delete ltm monitor https hm",
		"delete sys file ssl-key app.key ss.key mon.key",
		"delete sys file ssl-cert app.crt ca.crt ss.crt ssca.crt mon.crt",
		"delete sys file ssl-crl ss.crl",
	)
}
