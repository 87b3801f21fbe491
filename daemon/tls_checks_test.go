package daemon

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// issue makes a certificate for cn (a server's names, comma-separated)
// valid from..to, signed by p's CA, and writes name.crt and name.key; it
// returns their paths and the serial.
func (p *testPKI) issue(t *testing.T, name, cn string, client bool, from, to time.Time) (string, string, *big.Int) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	serial := big.NewInt(p.serial)
	names := strings.Split(cn, ",")
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: names[0]}, NotBefore: from, NotAfter: to,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.DNSNames = names
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	return p.write(t, name+".crt", "CERTIFICATE", der), p.write(t, name+".key", "PRIVATE KEY", kd), serial
}

// namedPKI is a testPKI whose CA is named cn, so that it is told apart
// from another test CA by name as well as by key.
func namedPKI(t *testing.T, cn string) *testPKI {
	t.Helper()
	p := newTestPKI(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: p.ca.NotBefore, NotAfter: p.ca.NotAfter, IsCA: true, BasicConstraintsValid: true, KeyUsage: p.ca.KeyUsage}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.roots = x509.NewCertPool()
	p.roots.AddCert(p.ca)
	p.write(t, "ca.crt", "CERTIFICATE", der)
	return p
}

// crl writes name.crl, p's CA revoking serials.
func (p *testPKI) crl(t *testing.T, name string, serials ...*big.Int) string {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1),
		ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(24 * time.Hour), RevokedCertificateEntries: entries}, p.ca, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".crl", "X509 CRL", der)
}

// tlsLabelMember answers every line with label over TLS at addr, with the
// certificate and key at crt and key.
func tlsLabelMember(t *testing.T, addr, crt, key, label string) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serveLabel(ln, label)
}

// TestServerSSLCertChecks: a server-ssl profile with peer-cert-mode
// require meets members with a good, an expired, an untrusted and a
// revoked certificate; each check drops the connection or lets it go on
// as its response control says, and the drops count as handshake
// failures of the profile.
func TestServerSSLCertChecks(t *testing.T) {
	pki := newTestPKI(t)
	stranger := namedPKI(t, "stranger CA")
	now := time.Now()
	gcrt, gkey, _ := pki.issue(t, "good", "good.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	ecrt, ekey, _ := pki.issue(t, "expired", "expired.example", false, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	ucrt, ukey, _ := stranger.issue(t, "untrusted", "untrusted.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	rcrt, rkey, rserial := pki.issue(t, "revoked", "revoked.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	crl := pki.crl(t, "ca", rserial)
	members := []struct{ name, addr, crt, key string }{
		{"good", "127.5.1.11:8443", gcrt, gkey},
		{"expired", "127.5.1.12:8443", ecrt, ekey},
		{"untrusted", "127.5.1.13:8443", ucrt, ukey},
		{"revoked", "127.5.1.14:8443", rcrt, rkey},
	}
	for _, m := range members {
		tlsLabelMember(t, m.addr, m.crt, m.key, m.name+" member")
	}
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto crl ca.crl from-local-file "+crl,
		"create ltm profile server-ssl strict peer-cert-mode require ca-file ca.crt crl-file ca.crl",
		"create ltm profile server-ssl lax defaults-from strict expire-cert-response-control ignore untrusted-cert-response-control ignore revoked-cert-status-response-control ignore",
		"create ltm profile server-ssl no_expiry defaults-from strict expire-cert-response-control ignore",
		"create ltm profile server-ssl named defaults-from strict authenticate-name other.example",
		"create ltm profile server-ssl unchecked crl-file ca.crl",
	)
	profiles := []string{"strict", "lax", "no_expiry", "named", "unchecked"}
	for i, m := range members {
		mustRun(t, s, "create ltm pool "+m.name+" members add { "+m.addr+" }")
		for j, p := range profiles {
			mustRun(t, s, "create ltm virtual "+p+"_"+m.name+" destination 127.5.1."+itoa(100+10*j+i)+":80 pool "+m.name+" profiles replace-all-with { tcp "+p+" }")
		}
	}
	ok := func(m string) string { return m + " member" }
	want := map[string][]string{ // profile → per member (good, expired, untrusted, revoked)
		"strict":    {ok("good"), "closed", "closed", "closed"},
		"lax":       {ok("good"), ok("expired"), ok("untrusted"), ok("revoked")},
		"no_expiry": {ok("good"), ok("expired"), "closed", "closed"},
		"named":     {"closed", "closed", "closed", "closed"},
		"unchecked": {ok("good"), ok("expired"), ok("untrusted"), ok("revoked")}, // peer-cert-mode ignore: nothing checked
	}
	for j, p := range profiles {
		for i, m := range members {
			addr := "127.5.1." + itoa(100+10*j+i) + ":80"
			if got := askVS(t, addr, "hello"); got != want[p][i] && !(want[p][i] == "closed" && got == "reset") {
				t.Errorf("server-ssl %s, %s member: %q, want %q", p, m.name, got, want[p][i])
			}
		}
	}
	out, _ := run(t, s, "show ltm profile server-ssl strict")
	if !regexp.MustCompile(`Handshake Failures\s+3\b`).MatchString(out) || !regexp.MustCompile(`Full Handshakes\s+1\b`).MatchString(out) {
		t.Errorf("show ltm profile server-ssl strict:\n%s", out)
	}
	for _, tc := range []struct{ cmd, err string }{
		{"modify ltm profile server-ssl strict expire-cert-response-control sometimes", "sometimes"},
		{"modify ltm profile server-ssl strict crl-file nosuch.crl", "nosuch.crl"},
		{"install sys crypto crl notcrl.crl from-local-file " + gcrt, "not an X509 CRL"},
		{"delete sys file ssl-crl ca.crl", "ca.crl"},
	} {
		if _, err := run(t, s, tc.cmd); err == "" || !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want one naming %q", tc.cmd, err, tc.err)
		}
	}
	// Refused changes left the profile working as before.
	if got := askVS(t, "127.5.1.100:80", "hello"); got != ok("good") {
		t.Errorf("after the refused changes: %q", got)
	}
	// mask is forward proxy's; taken as drop, and said so.
	if out, err := run(t, s, "modify ltm profile server-ssl strict untrusted-cert-response-control mask"); err != "" || !strings.Contains(out, "taken as drop") {
		t.Errorf("mask: %q %q", out, err)
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// TestClientSSLCertChecks: a client-ssl profile's crl-file turns away a
// revoked client certificate (peer-cert-mode require and request), and
// client-cert-ca is the list of CA names the CertificateRequest
// advertises, apart from ca-file, which verifies.
func TestClientSSLCertChecks(t *testing.T) {
	pki := newTestPKI(t)
	other := namedPKI(t, "other CA")
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "site.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	acrt, akey, _ := pki.issue(t, "alice", "alice", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	mcrt, mkey, mserial := pki.issue(t, "mallory", "mallory", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	crl := pki.crl(t, "ca", mserial)
	labelServer(t, "127.5.2.11:9000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"install sys crypto cert other-ca.crt from-local-file "+filepath.Join(other.dir, "ca.crt"),
		"install sys crypto crl ca.crl from-local-file "+crl,
		"create ltm profile client-ssl req cert-key-chain replace-all-with { site { cert site.crt key site.key } } peer-cert-mode require ca-file ca.crt crl-file ca.crl",
		"create ltm profile client-ssl ask defaults-from req peer-cert-mode request",
		"create ltm profile client-ssl adv defaults-from req crl-file none client-cert-ca other-ca.crt",
		"create ltm profile client-ssl adv_own defaults-from req crl-file none client-cert-ca ca.crt",
		"create ltm pool p members add { 127.5.2.11:9000 }",
		"create ltm virtual v_req destination 127.5.2.10:443 pool p profiles replace-all-with { tcp req }",
		"create ltm virtual v_ask destination 127.5.2.20:443 pool p profiles replace-all-with { tcp ask }",
		"create ltm virtual v_adv destination 127.5.2.30:443 pool p profiles replace-all-with { tcp adv }",
		"create ltm virtual v_adv_own destination 127.5.2.40:443 pool p profiles replace-all-with { tcp adv_own }",
	)
	pair := func(crt, key string) []tls.Certificate {
		c, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{c}
	}
	alice, mallory := pair(acrt, akey), pair(mcrt, mkey)
	for _, tc := range []struct {
		name, addr string
		certs      []tls.Certificate
		ok         bool
	}{
		{"require, good certificate", "127.5.2.10:443", alice, true},
		{"require, revoked certificate", "127.5.2.10:443", mallory, false},
		{"require, no certificate", "127.5.2.10:443", nil, false},
		{"request, good certificate", "127.5.2.20:443", alice, true},
		{"request, revoked certificate", "127.5.2.20:443", mallory, false},
		{"request, no certificate", "127.5.2.20:443", nil, true},
		// The advertised CA did not issue alice's certificate: a Go client
		// sends none, and require turns it away.
		{"client-cert-ca another CA", "127.5.2.30:443", alice, false},
		{"client-cert-ca the issuer", "127.5.2.40:443", alice, true},
	} {
		got, _, err := tlsLine(tc.addr, &tls.Config{RootCAs: pki.roots, ServerName: "site.example", Certificates: tc.certs})
		if tc.ok != (err == nil && got == "S1 Response") {
			t.Errorf("%s: %q %v, want through %v", tc.name, got, err, tc.ok)
		}
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed (Debian package openssl): the CA names advertised are not shown")
	}
	for _, tc := range []struct{ addr, want, not string }{
		{"127.5.2.30:443", "Acceptable client certificate CA names", "No client certificate CA names sent"},
		{"127.5.2.10:443", "No client certificate CA names sent", "Acceptable client certificate CA names"},
	} {
		cmd := exec.Command("openssl", "s_client", "-connect", tc.addr, "-servername", "site.example", "-tls1_2")
		cmd.Stdin = strings.NewReader("")
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), tc.not) {
			t.Errorf("openssl s_client %s:\n%s", tc.addr, out)
		}
	}
}

// TestServerSSLUseSNI: with serverssl-use-sni enabled, the member's
// handshake carries the server name the client sent, on a standard and
// on an HTTP virtual; disabled, none; a server-ssl profile's server-name
// wins over it.
func TestServerSSLUseSNI(t *testing.T) {
	pki := newTestPKI(t)
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "a.example,b.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	mcrt, mkey, _ := pki.issue(t, "member", "member.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	pair, err := tls.LoadX509KeyPair(mcrt, mkey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.5.3.11:8443", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "sni=%s", r.TLS.ServerName)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"create ltm profile client-ssl site cert-key-chain replace-all-with { site { cert site.crt key site.key } }",
		"create ltm profile server-ssl fixed server-name fixed.example",
		"create ltm pool p members add { 127.5.3.11:8443 }",
		"create ltm virtual l4_sni destination 127.5.3.10:443 pool p serverssl-use-sni enabled profiles replace-all-with { tcp site serverssl }",
		"create ltm virtual l4_plain destination 127.5.3.20:443 pool p profiles replace-all-with { tcp site serverssl }",
		"create ltm virtual http_sni destination 127.5.3.30:443 pool p serverssl-use-sni enabled profiles replace-all-with { tcp http site serverssl }",
		"create ltm virtual http_plain destination 127.5.3.40:443 pool p profiles replace-all-with { tcp http site serverssl }",
		"create ltm virtual http_fixed destination 127.5.3.50:443 pool p serverssl-use-sni enabled profiles replace-all-with { tcp http site fixed }",
		"create ltm virtual http_oc destination 127.5.3.60:443 pool p serverssl-use-sni enabled profiles replace-all-with { tcp http oneconnect site serverssl }",
	)
	get := func(addr, name string) string {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.roots, ServerName: name},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
			}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + name + "/")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for _, tc := range []struct{ name, addr, sni, want string }{
		{"standard, use-sni", "127.5.3.10:443", "a.example", "sni=a.example"},
		{"standard, use-sni, another name", "127.5.3.10:443", "b.example", "sni=b.example"},
		{"standard, disabled", "127.5.3.20:443", "a.example", "sni="},
		{"http, use-sni", "127.5.3.30:443", "b.example", "sni=b.example"},
		{"http, disabled", "127.5.3.40:443", "b.example", "sni="},
		{"http, the profile's server-name", "127.5.3.50:443", "a.example", "sni=fixed.example"},
		// OneConnect lends a member connection only to a client that sent
		// the name its handshake carried.
		{"oneconnect, a", "127.5.3.60:443", "a.example", "sni=a.example"},
		{"oneconnect, b after a", "127.5.3.60:443", "b.example", "sni=b.example"},
		{"oneconnect, a again", "127.5.3.60:443", "a.example", "sni=a.example"},
		{"oneconnect, b again", "127.5.3.60:443", "b.example", "sni=b.example"},
	} {
		if got := get(tc.addr, tc.sni); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed (Debian package curl)")
	}
	out, err := exec.Command("curl", "-sS", "--max-time", "5", "--cacert", filepath.Join(pki.dir, "ca.crt"),
		"--resolve", "b.example:443:127.5.3.30", "https://b.example/").CombinedOutput()
	if err != nil || string(out) != "sni=b.example" {
		t.Errorf("curl https://b.example/ through http_sni: %v %q", err, out)
	}
}

// TestClientSSLAllowNonSSL: with allow-non-ssl enabled, a client-ssl
// virtual serves a client that starts with a TLS handshake in TLS and
// one that starts with anything else in plaintext, on an HTTP and on a
// standard virtual; disabled, the plaintext client is refused.
func TestClientSSLAllowNonSSL(t *testing.T) {
	pki := newTestPKI(t)
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "site.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	ln, err := net.Listen("tcp", "127.5.4.11:80")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "member path=%s", r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"create ltm profile client-ssl both cert-key-chain replace-all-with { site { cert site.crt key site.key } } allow-non-ssl enabled",
		"create ltm profile client-ssl tls_only defaults-from both allow-non-ssl disabled",
		"create ltm pool p members add { 127.5.4.11:80 }",
		"create ltm virtual http_both destination 127.5.4.10:443 pool p profiles replace-all-with { tcp http both }",
		"create ltm virtual l4_both destination 127.5.4.20:443 pool p profiles replace-all-with { tcp both }",
		"create ltm virtual http_tls destination 127.5.4.30:443 pool p profiles replace-all-with { tcp http tls_only }",
	)
	get := func(scheme, addr string) string {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.roots},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
			}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(scheme + "://site.example/" + scheme)
		if err != nil {
			return "error"
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for _, tc := range []struct{ name, scheme, addr, want string }{
		{"http virtual, https", "https", "127.5.4.10:443", "member path=/https"},
		{"http virtual, http", "http", "127.5.4.10:443", "member path=/http"},
		{"standard virtual, https", "https", "127.5.4.20:443", "member path=/https"},
		{"standard virtual, http", "http", "127.5.4.20:443", "member path=/http"},
		{"allow-non-ssl disabled, https", "https", "127.5.4.30:443", "member path=/https"},
		{"allow-non-ssl disabled, http", "http", "127.5.4.30:443", "error"},
	} {
		if got := get(tc.scheme, tc.addr); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed (Debian package curl)")
	}
	for _, scheme := range []string{"http", "https"} {
		out, err := exec.Command("curl", "-sS", "--max-time", "5", "--cacert", filepath.Join(pki.dir, "ca.crt"),
			"--resolve", "site.example:443:127.5.4.10", scheme+"://site.example:443/curl").CombinedOutput()
		if err != nil || string(out) != "member path=/curl" {
			t.Errorf("curl %s:// through http_both: %v %q", scheme, err, out)
		}
	}
	if out, err := exec.Command("curl", "-sS", "--max-time", "5", "--resolve", "site.example:443:127.5.4.30", "http://site.example:443/curl").CombinedOutput(); err == nil {
		t.Errorf("curl http:// through http_tls (allow-non-ssl disabled) was answered: %q", out)
	}
}

// TestClientSSLRetainCertificate: a resumed connection shows the
// client's certificate to the X509:: commands only when the profile
// keeps it with the session (retain-certificate true, the default).
func TestClientSSLRetainCertificate(t *testing.T) {
	pki := newTestPKI(t)
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "site.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	labelServer(t, "127.5.6.11:9000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"create ltm profile client-ssl keep cert-key-chain replace-all-with { site { cert site.crt key site.key } } peer-cert-mode request ca-file ca.crt session-ticket enabled",
		"create ltm profile client-ssl forget defaults-from keep retain-certificate false",
		`create ltm rule certrule {
when CLIENT_ACCEPTED { TCP::collect }
when CLIENTSSL_HANDSHAKE {
    if { [SSL::cert count] > 0 } { set who [X509::subject [SSL::cert 0]] } else { set who none }
}
when CLIENT_DATA {
    TCP::respond "cert $who\n"
    TCP::payload replace 0 [TCP::payload length] ""
    TCP::release
}
}`,
		"create ltm pool p members add { 127.5.6.11:9000 }",
		"create ltm virtual v_keep destination 127.5.6.10:443 pool p rules { certrule } profiles replace-all-with { tcp keep }",
		"create ltm virtual v_forget destination 127.5.6.20:443 pool p rules { certrule } profiles replace-all-with { tcp forget }",
	)
	alice := clientPair(t, pki)
	for _, tc := range []struct {
		addr        string
		full, again string
	}{
		{"127.5.6.10:443", "cert CN=alice,O=Example", "cert CN=alice,O=Example"},
		{"127.5.6.20:443", "cert CN=alice,O=Example", "cert none"},
	} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			cfg := &tls.Config{RootCAs: pki.roots, ServerName: "site.example", Certificates: []tls.Certificate{alice},
				MinVersion: ver, MaxVersion: ver, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
			got, cs, err := tlsLine(tc.addr, cfg)
			if err != nil || got != tc.full || cs.DidResume {
				t.Fatalf("%s %s, full handshake: %q %v resumed %v", tc.addr, tls.VersionName(ver), got, err, cs.DidResume)
			}
			got, cs, err = tlsLine(tc.addr, cfg)
			if err != nil || got != tc.again || !cs.DidResume {
				t.Errorf("%s %s, resumed: %q %v resumed %v, want %q", tc.addr, tls.VersionName(ver), got, err, cs.DidResume, tc.again)
			}
		}
	}
}
