package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"
)

func TestCreateCryptoKey(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	labelServer(t, "127.9.1.11:9000", "K1")
	for _, c := range []struct{ cmd, err string }{
		{cmd: "create sys crypto key web gen-certificate common-name web.example.test lifetime 30 organization Example country US subject-alternative-name \"DNS:web.example.test, IP:127.9.1.1\""},
		{cmd: "create sys crypto key ec key-type ec-private curve-name secp384r1 gen-certificate common-name ec.example.test"},
		{cmd: "create sys crypto key plain key-size 3072 passphrase kp-1"},
		{cmd: "create sys crypto key web", err: "01020066:3: The requested key (/Common/web) already exists."},
		{cmd: "create sys crypto key bad key-size 1000", err: "key-size takes 2048, 3072 or 4096"},
		{cmd: "create sys crypto key bad curve-name p256", err: "curve-name takes prime256v1"},
		{cmd: "create sys crypto key bad gen-certificate", err: "gen-certificate needs a common-name"},
		{cmd: "create sys crypto key bad common-name x", err: "go with gen-certificate"},
		{cmd: "create sys crypto key bad gen-certificate common-name x subject-alternative-name IP:nope", err: "not an IP address"},
		{cmd: "create sys crypto key bad colour red", err: `"colour" unknown property`},
	} {
		_, err := run(t, s, c.cmd)
		if c.err == "" && err != "" || c.err != "" && !strings.Contains(err, c.err) {
			t.Fatalf("%s: %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list sys file ssl-key bad"); out != "" {
		t.Fatalf("a refused key was made: %s", out)
	}
	out, _ := run(t, s, "list sys crypto key web ec plain")
	for _, w := range []string{"sys crypto key web {\n    key-size 2048\n    key-type rsa-private\n", "sys crypto key ec {\n    key-size 384\n    key-type ec-private\n", "sys crypto key plain {\n    key-size 3072\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("list sys crypto key: want %q in\n%s", w, out)
		}
	}
	out, _ = run(t, s, "list sys crypto cert web")
	for _, w := range []string{"common-name web.example.test", "lifetime 30", "organization Example", `subject-alternative-name "DNS:web.example.test, IP Address:127.9.1.1"`} {
		if !strings.Contains(out, w) {
			t.Errorf("list sys crypto cert: want %q in\n%s", w, out)
		}
	}
	out, _ = run(t, s, "list sys file ssl-key plain")
	if !strings.Contains(out, "passphrase $M$") || strings.Contains(out, "source-path") {
		t.Errorf("the generated key's object:\n%s", out)
	}
	// The pair serves TLS.
	mustRun(t, s,
		"create ltm pool p members add { 127.9.1.11:9000 }",
		"create ltm profile client-ssl cs cert-key-chain replace-all-with { default { cert web key web } }",
		"create ltm virtual v destination 127.9.1.1:443 pool p profiles replace-all-with { tcp cs { context clientside } }")
	var conn *tls.Conn
	var err error
	for i := 0; i < 50; i++ {
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", "127.9.1.1:443", &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	leaf := conn.ConnectionState().PeerCertificates[0]
	if leaf.Subject.CommonName != "web.example.test" || leaf.VerifyHostname("web.example.test") != nil {
		t.Fatalf("served %v", leaf.Subject)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "web.example.test"}); err != nil {
		t.Fatalf("the self-signed certificate does not verify against itself: %v", err)
	}
}
