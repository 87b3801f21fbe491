package daemon

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPKI is a CA with server and client certificates written as PEM
// files in a directory.
type testPKI struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	roots  *x509.CertPool
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), roots: x509.NewCertPool(), serial: 100}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openltm test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = k
	p.roots.AddCert(p.ca)
	p.write(t, "ca.crt", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaf issues a certificate for cn (a server's DNS name, or a client's
// name) and writes name.crt and name.key.
func (p *testPKI) leaf(t *testing.T, name, cn string, client bool) (string, string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"Example"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	return p.write(t, name+".crt", "CERTIFICATE", der), p.write(t, name+".key", "PRIVATE KEY", kd)
}

func clientPair(t *testing.T, p *testPKI) tls.Certificate {
	t.Helper()
	crt, key := p.leaf(t, "alice", "alice", true)
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func mustRun(t *testing.T, s *Session, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s (%s)", c, err, out)
		}
	}
}

// tlsLine sends one line over TLS to addr and returns the answer.
func tlsLine(addr string, cfg *tls.Config) (string, tls.ConnectionState, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", tls.ConnectionState{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return "", tls.ConnectionState{}, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), c.ConnectionState(), err
}

// TestTLSFromTmsh installs a certificate and key the tmsh way, terminates
// TLS with a client-ssl profile on a standard virtual, keeps working
// after the source files are gone and the daemon restarts, and refuses
// what BIG-IP refuses.
func TestTLSFromTmsh(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	_, otherKey := pki.leaf(t, "other", "other.example", false)
	labelServer(t, "127.0.150.11:9000", "S1 Response")
	e, p := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
		"create ltm profile client-ssl app_ssl cert-key-chain replace-all-with { app { cert app.crt key app.key } } defaults-from clientssl peer-cert-mode request",
		"create ltm pool p members add { 127.0.150.11:9000 }",
		"create ltm virtual vs destination 127.0.150.10:443 pool p profiles replace-all-with { tcp app_ssl { context clientside } }",
	)
	out, _ := run(t, s, "list sys file ssl-cert app.crt")
	if !strings.Contains(out, "source-path file:"+crt) || !strings.Contains(out, "cache-path "+filepath.Join(dir, "filestore")) || !strings.Contains(out, "revision 1") {
		t.Fatalf("list sys file ssl-cert:\n%s", out)
	}
	cfg := &tls.Config{RootCAs: pki.roots, ServerName: "app.example"}
	if got, cs, err := tlsLine("127.0.150.10:443", cfg); err != nil || got != "S1 Response" || cs.PeerCertificates[0].Subject.CommonName != "app.example" {
		t.Fatalf("through the client-ssl virtual: %q %v", got, err)
	}

	// Refused: a key that is not the certificate's, a file that is not
	// there or not PEM, a virtual with two server-ssl profiles.
	for _, tc := range []struct{ cmd, err string }{
		{"install sys crypto key other.key from-local-file " + otherKey, ""},
		{"create ltm profile client-ssl bad_ssl cert-key-chain replace-all-with { x { cert app.crt key other.key } }", ""},
		{"create ltm virtual vs2 destination 127.0.150.20:443 pool p profiles replace-all-with { tcp bad_ssl }", "X509_check_private_key:key values mismatch"},
		{"install sys crypto cert nope.crt from-local-file " + filepath.Join(pki.dir, "missing.crt"), "no such file"},
		{"install sys crypto cert notpem.crt from-local-file " + otherKey, "not a CERTIFICATE"},
		{"create sys file ssl-cert nosrc.crt", "needs a source-path"},
		{"create ltm profile server-ssl ss2", ""},
		{"create ltm virtual vs3 destination 127.0.150.30:443 pool p profiles replace-all-with { tcp serverssl ss2 }", "a virtual server takes one server-ssl profile"},
		{"install sys crypto csr x from-local-file /etc/hosts", "expected cert|key|crl NAME from-local-file PATH"},
		{"create ltm profile client-ssl nocert_ssl cert-key-chain replace-all-with { x { cert nosuch.crt key app.key } }", "01020036:3: The requested certificate (/Common/nosuch.crt) was not found."},
	} {
		if _, err := run(t, s, tc.cmd); (tc.err == "") != (err == "") || !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want %q", tc.cmd, err, tc.err)
		}
	}
	// A cipher group (BIG-IP 13+): the suites of its allow rules.
	mustRun(t, s,
		"create ltm cipher rule gcm cipher ECDHE_ECDSA+AES-GCM:!TLSv1_3",
		"create ltm cipher group gcm_only allow replace-all-with { gcm { } }",
		"create ltm profile client-ssl grp_ssl cert-key-chain replace-all-with { app { cert app.crt key app.key } } cipher-group gcm_only ciphers none",
		"create ltm virtual vs5 destination 127.0.150.50:443 pool p profiles replace-all-with { tcp grp_ssl }")
	if got, cs, err := tlsLine("127.0.150.50:443", cfg); err != nil || got != "S1 Response" || cs.Version != tls.VersionTLS12 || !strings.Contains(tls.CipherSuiteName(cs.CipherSuite), "ECDSA_WITH_AES_128_GCM") && !strings.Contains(tls.CipherSuiteName(cs.CipherSuite), "ECDSA_WITH_AES_256_GCM") {
		t.Errorf("through the cipher group: %q %v %s %x", got, err, tls.CipherSuiteName(cs.CipherSuite), cs.Version)
	}
	if _, err := run(t, s, "create ltm cipher group nogo allow replace-all-with { nosuch { } }"); err != "" {
		t.Fatalf("a group is kept until a profile uses it: %s", err)
	}
	if _, err := run(t, s, "create ltm profile client-ssl nogo_ssl cert-key-chain replace-all-with { app { cert app.crt key app.key } } cipher-group nogo"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s, "create ltm virtual vs6 destination 127.0.150.60:443 pool p profiles replace-all-with { tcp nogo_ssl }"); !strings.Contains(err, "ltm cipher rule nosuch was not found") {
		t.Errorf("a group naming a rule that does not exist: %q", err)
	}

	// Rules on a standard TLS virtual see the plaintext and the TLS state.
	mustRun(t, s, `create ltm rule l4rule {
when CLIENT_ACCEPTED { TCP::collect }
when CLIENTSSL_HANDSHAKE { set v [SSL::cipher version] }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "hello" } {
        TCP::respond "rule $v [X509::subject [SSL::cert 0]]\n"
        TCP::payload replace 0 [TCP::payload length] ""
    }
    TCP::release
}
}`,
		"create ltm virtual vs4 destination 127.0.150.40:443 pool p rules { l4rule } profiles replace-all-with { tcp app_ssl }")
	if got, _, err := tlsLine("127.0.150.40:443", &tls.Config{RootCAs: pki.roots, ServerName: "app.example", Certificates: []tls.Certificate{clientPair(t, pki)}}); err != nil || got != "rule TLSv1.3 CN=alice,O=Example" {
		t.Errorf("rules on a standard TLS virtual: %q %v", got, err)
	}
	if _, err := run(t, s, "list ltm virtual vs2"); err == "" {
		t.Error("the refused virtual exists")
	}

	// A saved configuration loaded again gets stored copies of its files
	// when their source is readable here.
	keySrc := filepath.Join(pki.dir, "loaded.key")
	kb, _ := os.ReadFile(key)
	os.WriteFile(keySrc, kb, 0o600)
	conf := filepath.Join(pki.dir, "loaded.conf")
	os.WriteFile(conf, []byte("sys file ssl-key /Common/loaded.key {\n    source-path file:"+keySrc+"\n}\n"), 0o600)
	mustRun(t, s, "load sys config merge file "+conf)
	if out, _ := run(t, s, "list sys file ssl-key loaded.key"); !strings.Contains(out, "cache-path "+filepath.Join(dir, "filestore")) {
		t.Fatalf("a loaded key without a stored copy:\n%s", out)
	}

	// The stored copies outlive the source files and a restart.
	os.Remove(crt)
	os.Remove(key)
	p.Close()
	e.Close()
	openWithPlane(t, dir)
	if got, _, err := tlsLine("127.0.150.10:443", cfg); err != nil || got != "S1 Response" {
		t.Fatalf("after a restart without the source files: %q %v", got, err)
	}
}

// TestTLSBuiltinProfiles: the built-in clientssl serves the engine's own
// default.crt, and server-ssl re-encrypts to a TLS member.
func TestTLSBuiltinProfiles(t *testing.T) {
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "member", "member.example", false)
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.151.11:8443", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serveLabel(ln, "TLS member")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool p members add { 127.0.151.11:8443 }")
	// BIG-IP's defaults are not warned of; what a user chooses is.
	if out, err := run(t, s, "create ltm virtual vs destination 127.0.151.10:443 pool p profiles replace-all-with { tcp clientssl serverssl }"); err != "" || out != "" {
		t.Fatalf("the built-in profiles: %q %q", out, err)
	}
	// mode disabled: the profile does no TLS.
	mustRun(t, s, "create ltm profile client-ssl off_ssl mode disabled",
		"create ltm virtual vs3 destination 127.0.151.30:443 pool p profiles replace-all-with { tcp off_ssl serverssl }")
	if got := askVS(t, "127.0.151.30:443", "plain"); got != "TLS member" {
		t.Fatalf("client-ssl with mode disabled: %q", got)
	}
	mustRun(t, s, "create ltm profile client-ssl reneg renegotiation enabled ciphers DEFAULT")
	if out, err := run(t, s, "create ltm virtual vs2 destination 127.0.151.20:443 pool p profiles replace-all-with { tcp reneg }"); err != "" ||
		!strings.Contains(out, "Warning: profile client-ssl /Common/reneg: renegotiation enabled is not supported") || !strings.Contains(out, "Go's TLS cannot do, left out: ") {
		t.Fatalf("a profile asking for what Go cannot do: %q %q", out, err)
	}
	got, cs, err := tlsLine("127.0.151.10:443", &tls.Config{InsecureSkipVerify: true})
	if err != nil || got != "TLS member" {
		t.Fatalf("clientssl + serverssl: %q %v", got, err)
	}
	if cn := cs.PeerCertificates[0].Subject.CommonName; cn != "localhost.localdomain" {
		t.Fatalf("default.crt's CN = %q", cn)
	}
}

// TestTLSRealClients runs curl and openssl s_client against an HTTP
// virtual with two client-ssl profiles (SNI) and a client certificate
// required on one.
func TestTLSRealClients(t *testing.T) {
	for _, tool := range []string{"curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package %s)", tool, tool)
		}
	}
	pki := newTestPKI(t)
	wcrt, wkey := pki.leaf(t, "www", "www.example", false)
	acrt, akey := pki.leaf(t, "api", "api.example", false)
	ccrt, ckey := pki.leaf(t, "client", "alice", true)
	ln, err := net.Listen("tcp", "127.0.152.11:80")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "member host=%s xff=%s\n", r.Host, r.Header.Get("X-Forwarded-For"))
	})}
	go srv.Serve(ln)
	defer srv.Close()

	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert www.crt from-local-file "+wcrt,
		"install sys crypto key www.key from-local-file "+wkey,
		"install sys crypto cert api.crt from-local-file "+acrt,
		"install sys crypto key api.key from-local-file "+akey,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"create ltm profile client-ssl www_ssl cert-key-chain replace-all-with { www { cert www.crt key www.key } } server-name www.example sni-default true",
		"create ltm profile client-ssl api_ssl cert-key-chain replace-all-with { api { cert api.crt key api.key } } server-name api.example peer-cert-mode require ca-file ca.crt",
		"create ltm profile http xff_http insert-xforwarded-for enabled",
		"create ltm pool p members add { 127.0.152.11:80 }",
		"create ltm virtual vs destination 127.0.152.10:443 pool p profiles replace-all-with { tcp xff_http www_ssl api_ssl }",
	)
	ca := filepath.Join(pki.dir, "ca.crt")
	curl := func(host string, extra ...string) (string, error) {
		args := append([]string{"-sS", "--max-time", "5", "--cacert", ca, "--resolve", host + ":443:127.0.152.10", "https://" + host + "/"}, extra...)
		out, err := exec.Command("curl", args...).CombinedOutput()
		return string(out), err
	}
	if out, err := curl("www.example"); err != nil || out != "member host=www.example xff=127.0.0.1\n" {
		t.Fatalf("curl www.example: %v %q", err, out)
	}
	if out, err := curl("api.example"); err == nil {
		t.Fatalf("curl api.example without a client certificate was answered: %q", out)
	}
	if out, err := curl("api.example", "--cert", ccrt, "--key", ckey); err != nil || !strings.Contains(out, "host=api.example") {
		t.Fatalf("curl api.example with a client certificate: %v %q", err, out)
	}
	// openssl s_client: the certificate chosen by SNI.
	for sni, cn := range map[string]string{"www.example": "www.example", "api.example": "api.example"} {
		cmd := exec.Command("openssl", "s_client", "-connect", "127.0.152.10:443", "-servername", sni, "-ign_eof", "-CAfile", ca, "-cert", ccrt, "-key", ckey)
		cmd.Stdin = strings.NewReader("GET / HTTP/1.1\r\nHost: " + sni + "\r\nConnection: close\r\n\r\n")
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "member host=") {
			t.Fatalf("openssl s_client -servername %s: %v\n%s", sni, err, out)
		}
		if !strings.Contains(string(out), "CN = "+cn) || !strings.Contains(string(out), "Verify return code: 0 (ok)") || !strings.Contains(string(out), "member host="+sni) {
			t.Fatalf("openssl s_client -servername %s:\n%s", sni, out)
		}
	}
}

// TestTLSRuleEventsNeedProfiles: as BIG-IP, a rule with CLIENTSSL_
// events needs a client-ssl profile on the virtual.
func TestTLSRuleEventsNeedProfiles(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm rule sslr { when CLIENTSSL_HANDSHAKE { log local0. [SSL::cipher name] } }",
		"create ltm pool p members add { 127.0.153.11:80 }",
	)
	if _, err := run(t, s, "create ltm virtual vs destination 127.0.153.10:80 pool p rules { sslr } profiles replace-all-with { tcp http }"); !strings.Contains(err, "01070394:3: CLIENTSSL_HANDSHAKE event in a rule requires an associated CLIENTSSL profile") {
		t.Fatalf("CLIENTSSL_HANDSHAKE without client-ssl: %q", err)
	}
	mustRun(t, s, "create ltm virtual vs destination 127.0.153.10:443 pool p rules { sslr } profiles replace-all-with { tcp http clientssl }")
}

// TestTLSBigIPFiles loads the file objects a BIG-IP saves, with the
// fields it writes beside them: read, kept and listed; a virtual whose
// certificate's file is not on this machine carries no traffic and says
// why.
func TestTLSBigIPFiles(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "bigip.conf")
	os.WriteFile(conf, []byte(`sys file ssl-cert /Common/shop.crt {
    cache-path /config/filestore/files_d/Common_d/certificate_d/:Common:shop.crt_45812_1
    certificate-key-size 2048
    checksum SHA1:1234:0123456789abcdef0123456789abcdef01234567
    expiration-string "Jan  1 00:00:00 2025 GMT"
    issuer "CN=Example CA"
    key-type rsa-public
    revision 1
    source-path file:/var/config/rest/downloads/shop.crt
    subject "CN=shop.example"
}
sys file ssl-key /Common/shop.key {
    cache-path /config/filestore/files_d/Common_d/certificate_key_d/:Common:shop.key_45813_1
    key-size 2048
    revision 1
    security-type normal
    source-path file:/var/config/rest/downloads/shop.key
}
ltm profile client-ssl /Common/shop_ssl {
    cert-key-chain { shop { cert /Common/shop.crt key /Common/shop.key } }
    defaults-from /Common/clientssl
}
ltm pool /Common/p { members { /Common/127.0.154.11:80 { address 127.0.154.11 } } }
ltm virtual /Common/shop_vs {
    destination /Common/127.0.154.10:443
    pool /Common/p
    profiles { /Common/shop_ssl { context clientside } /Common/tcp { } }
}
`), 0o600)
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	out, err := run(t, s, "load sys config merge file "+conf)
	if err != "" || !strings.Contains(out, "sys file ssl-cert /Common/shop.crt: cannot read /var/config/rest/downloads/shop.crt") || !strings.Contains(out, "carries no traffic") {
		t.Fatalf("load: %q %q", out, err)
	}
	if out, _ := run(t, s, "list sys file ssl-cert shop.crt"); !strings.Contains(out, `issuer "CN=Example CA"`) {
		t.Fatalf("list:\n%s", out)
	}
	if _, err := run(t, s, "modify sys file ssl-cert shop.crt subject x"); !strings.Contains(err, "read-only") {
		t.Fatalf("a system field set by hand: %q", err)
	}
}
