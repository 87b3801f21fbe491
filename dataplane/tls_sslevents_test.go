package dataplane

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
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// helloRule logs what the handshake's middle events read.
const helloRule = `
when CLIENTSSL_SERVERHELLO_SEND {
    log local0. "shs [SSL::cipher version] [SSL::cipher name] sni=[SSL::sni name] sv=[SSL::extensions exists -type 43]"
}
when SERVERSSL_SERVERHELLO { log local0. "ssh [SSL::cipher version] [SSL::cipher name]" }
when SERVERSSL_SERVERCERT {
    log local0. "cert [X509::subject [SSL::cert 0]] n=[SSL::cert count] vr=[SSL::verify_result]"
    if { [IP::client_addr] eq "127.129.1.3" } { reject }
}
when CLIENTSSL_PASSTHROUGH { log local0. "passthrough [IP::client_addr]" }
`

// waitLine waits (bounded) until lg has a line containing want.
func waitLine(t *testing.T, lg *ruleLog, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(lg.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no rule line %q in:\n%s", want, lg)
}

// tlsAskFrom connects from src to vs over TLS 1.2 or 1.3, sends a line and
// returns the answer.
func tlsAskFrom(src, vs string, roots *x509.CertPool, version uint16) (string, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{ServerName: "app.example", RootCAs: roots, MinVersion: version, MaxVersion: version})
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestSSLHelloEventsStandard: on a standard virtual with client-ssl and
// server-ssl, CLIENTSSL_SERVERHELLO_SEND reads the cipher and version
// the virtual's hello agreed and the client's SNI, SERVERSSL_SERVERHELLO
// the member's, SERVERSSL_SERVERCERT the member's certificate (and a
// reject there ends the client); CLIENTSSL_PASSTHROUGH runs for a
// plaintext client of allow-non-ssl.
func TestSSLHelloEventsStandard(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startTLSServer(t, "127.129.1.11:9443", "M", mcert, mkey)
	startServer(t, "127.129.1.21:9000", "P")
	p, _ := newPlane(t)
	cfg := basic("127.129.1.10:443", "127.129.1.11:9443")
	rs, lg := compileRules(t, helloRule)
	lg.showOnFailure(t)
	vs := cfg.Virtuals["/Common/vs"]
	vs.Rules = rs
	vs.TLS = clientSSL(t, cert, key)
	vs.TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)

	for _, v := range []struct {
		version uint16
		name    string
		sv      int
	}{{tls.VersionTLS12, "TLSv1.2", 0}, {tls.VersionTLS13, "TLSv1.3", 1}} {
		line, err := tlsAskFrom("127.129.1.2", "127.129.1.10:443", roots, v.version)
		if err != nil || line != "M Response tls" {
			t.Fatalf("%s: %q %v", v.name, line, err)
		}
		waitLine(t, lg, fmt.Sprintf("shs %s ", v.name))
		waitLine(t, lg, fmt.Sprintf("sni=app.example sv=%d", v.sv))
		waitLine(t, lg, "ssh TLSv1.3 TLS13-")
		waitLine(t, lg, "cert CN=member.example,O=openltm test n=1 vr=")
	}
	if line, err := tlsAskFrom("127.129.1.3", "127.129.1.10:443", roots, tls.VersionTLS13); err == nil {
		t.Fatalf("a rule rejected the member's certificate, yet the client got %q", line)
	}

	// allow-non-ssl: a plaintext client passes through.
	cfg2 := basic("127.129.1.20:443", "127.129.1.21:9000")
	rs2, lg2 := compileRules(t, helloRule)
	lg2.showOnFailure(t)
	cfg2.Virtuals["/Common/vs"].Rules = rs2
	cfg2.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg2.Virtuals["/Common/vs"].TLS.AllowNonSSL = true
	mustApply(t, p, cfg2)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.129.1.4")}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", "127.129.1.20:443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "hello\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || strings.TrimSpace(line) != "P Response" {
		t.Fatalf("plaintext client: %q %v", line, err)
	}
	waitLine(t, lg2, "passthrough 127.129.1.4")
}

// chainCerts is a root CA, an intermediate CA it signed, and a leaf for
// member.example the intermediate signed: the leaf's chain (leaf,
// intermediate) as a member sends it, and the root as a ca-file.
func chainCerts(t *testing.T) (tls.Certificate, *tlsprof.Cert) {
	t.Helper()
	mk := func(cn string, ca bool, parent *x509.Certificate, pk *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: ca, BasicConstraintsValid: true,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if !ca {
			tmpl.DNSNames = []string{cn}
		}
		if parent == nil {
			parent, pk = tmpl, k
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, pk)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, k
	}
	root, rk := mk("Test Root", true, nil, nil)
	inter, ik := mk("Test Intermediate", true, root, rk)
	leaf, lk := mk("member.example", false, inter, ik)
	ca, err := tlsprof.ParseCert("/Common/root.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw}))
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{leaf.Raw, inter.Raw}, PrivateKey: lk}, ca
}

// TestSSLAuthenticateDepth: a member whose chain holds one intermediate
// certificate is refused where a rule's SSL::authenticate depth 0 holds
// the chain to none, and let through at depth 1 (server-ssl with
// peer-cert-mode require); SSL::secure_renegotiation reads the profile's
// mode, 2 (require-strict, server-ssl's default).
func TestSSLAuthenticateDepth(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	pair, ca := chainCerts(t)
	ln, err := tls.Listen("tcp", "127.129.2.11:9443", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			io.WriteString(c, "M Response tls\n")
		}
	})
	p, _ := newPlane(t)
	cfg := basic("127.129.2.10:443", "127.129.2.11:9443")
	rs, lg := compileRules(t, `
when SERVER_CONNECTED {
    if { [IP::client_addr] eq "127.129.2.3" } { SSL::authenticate depth 0 } else { SSL::authenticate depth 1 }
    log local0. "reneg [SSL::secure_renegotiation]"
}
when SERVERSSL_SERVERCERT { log local0. "vr=[SSL::verify_result]" }`)
	lg.showOnFailure(t)
	vs := cfg.Virtuals["/Common/vs"]
	vs.Rules = rs
	vs.TLS = clientSSL(t, cert, key)
	b, err := (&tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1, PeerCertMode: "require", CAFile: ca}).Build()
	if err != nil {
		t.Fatal(err)
	}
	vs.TLS.Server = b
	mustApply(t, p, cfg)
	if line, err := tlsAskFrom("127.129.2.2", "127.129.2.10:443", roots, tls.VersionTLS13); err != nil || line != "M Response tls" {
		t.Fatalf("depth 1: %q %v", line, err)
	}
	waitLine(t, lg, "vr=0")
	waitLine(t, lg, "reneg 2") // server-ssl's default, require-strict
	if line, err := tlsAskFrom("127.129.2.3", "127.129.2.10:443", roots, tls.VersionTLS13); err == nil {
		t.Fatalf("depth 0 let a chain with an intermediate through: %q", line)
	}
}

// TestSSLEventsHTTP: on an http virtual with client-ssl and server-ssl,
// the handshake events run for a client and its member connection, and
// the SSL::session family works: SSL::sessionticket reads the client's
// ticket and SSL::unclean_shutdown takes the client's side.
func TestSSLEventsHTTP(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startTLSMember(t, "127.129.3.11:443", "member")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.129.3.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.129.3.11:443")
	rs, lg := compileRules(t, helloRule, `
when CLIENTSSL_HANDSHAKE {
    set tk [string length [SSL::sessionticket]]
    SSL::unclean_shutdown enable
    log local0. "secure [SSL::is_renegotiation_secure]"
}
when HTTP_RESPONSE { HTTP::header insert X-Ticket $tk }`)
	lg.showOnFailure(t)
	vs := cfg.Virtuals["/Common/vs"]
	vs.Rules = rs
	vs.TLS = clientSSL(t, cert, key)
	vs.TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://127.129.3.10/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "member tls=true" || resp.Header.Get("X-Ticket") == "" {
		t.Fatalf("%q %v", body, resp.Header)
	}
	waitLine(t, lg, "shs TLSv1.3 TLS13-")
	waitLine(t, lg, "sni=www.example sv=1")
	waitLine(t, lg, "ssh TLSv1.3 TLS13-")
	waitLine(t, lg, "cert CN=member.example,O=openltm test n=1 vr=")
	waitLine(t, lg, "secure 1")
}
