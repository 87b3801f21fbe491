package dataplane

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// notify-cert-status-to-virtual-server: under peer-cert-mode require, a
// client whose certificate does not verify is let through the handshake
// and the virtual's rule decides from SSL::verify_result; without it the
// handshake refuses the client. An http virtual (the rule answers) and a
// standard one (the rule rejects), TLS 1.2 and 1.3, Go clients and curl.
func TestTLSNotifyCertStatus(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	acert, akey, _ := testCert(t, "alice")   // the ca-file: alice verifies
	mcert, mkey, _ := testCert(t, "mallory") // self-signed, unknown: 18
	startHTTPServer(t, "127.85.1.11:80", "WEB")
	startServer(t, "127.85.1.12:9000", "S1")
	alice, _ := tlsprof.Pair("alice", acert, akey, nil)
	mallory, _ := tlsprof.Pair("mallory", mcert, mkey, nil)

	build := func(notify bool) *TLS {
		b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
			PeerCertMode: "require", CAFile: acert, AuthenticateDepth: -1, NotifyCertStatus: notify}).Build()
		if err != nil {
			t.Fatal(err)
		}
		return &TLS{Client: b.Config, ClientBuilt: []*tlsprof.Built{b}, ClientProfiles: []string{"/Common/cs"}}
	}
	// ask sends one line (a request) and returns the first line of the
	// answer; an error when the handshake or the connection fails.
	ask := func(vs string, tc *tls.Config, http1 bool) (string, error) {
		d := &net.Dialer{Timeout: 2 * time.Second}
		c, err := tls.DialWithDialer(d, "tcp", vs, tc)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if http1 {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: www.example\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return "", err
			}
			body, _ := io.ReadAll(resp.Body)
			return resp.Status + " " + string(body), nil
		}
		io.WriteString(c, "hello\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		return strings.TrimSpace(line), err
	}

	httpRule := `
when HTTP_REQUEST {
    if { [SSL::verify_result] == 0 } {
        HTTP::respond 200 content "welcome [X509::subject [SSL::cert 0]]"
    } else {
        HTTP::respond 403 content "verify=[SSL::verify_result]"
    }
}`
	stdRule := `
when CLIENTSSL_HANDSHAKE {
    if { [SSL::verify_result] != 0 } { reject }
}`
	for i, vt := range []struct {
		name string
		http bool
	}{{"http virtual", true}, {"standard virtual", false}} {
		for j, notify := range []bool{false, true} {
			vs := "127.85.1." + string(rune('1'+i*2+j)) + ":443"
			p, _ := newPlane(t)
			var cfg *Config
			if vt.http {
				cfg = mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.85.1.11:80")
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, httpRule)
			} else {
				cfg = basic(vs, "127.85.1.12:9000")
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, stdRule)
			}
			cfg.Virtuals["/Common/vs"].TLS = build(notify)
			mustApply(t, p, cfg)
			for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				for _, cl := range []struct {
					who  string
					cert *tls.Certificate
				}{{"alice", &alice}, {"mallory", &mallory}, {"none", nil}} {
					name := vt.name + "/notify=" + map[bool]string{true: "enabled", false: "disabled"}[notify] + "/" + tlsprof.VersionName(ver) + "/" + cl.who
					t.Run(name, func(t *testing.T) {
						tc := &tls.Config{RootCAs: roots, ServerName: "www.example", MinVersion: ver, MaxVersion: ver}
						if cl.cert != nil {
							tc.Certificates = []tls.Certificate{*cl.cert}
						}
						got, err := ask(vs, tc, vt.http)
						var want string
						switch {
						case cl.who == "alice" && vt.http:
							want = "200 OK welcome CN=alice,O=openltm test"
						case cl.who == "alice":
							want = "S1 Response"
						case cl.who == "mallory" && notify && vt.http:
							want = "403 Forbidden verify=18" // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
						}
						if want == "" {
							if err == nil {
								t.Fatalf("let in: %q", got)
							}
							return
						}
						if err != nil || got != want {
							t.Fatalf("got %q, %v; want %q", got, err, want)
						}
					})
				}
			}
		}
	}

	// curl with mallory's certificate through the notifying http
	// virtual: the rule's 403, not a handshake failure.
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("curl not found: the curl client is not tried")
		return
	}
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(mkey.Signer)
	out, err := exec.Command("curl", "-s", "-w", " %{http_code}", "--max-time", "10",
		"--cacert", write("ca.pem", "CERTIFICATE", cert.Certs[0].Raw),
		"--cert", write("m.pem", "CERTIFICATE", mcert.Certs[0].Raw), "--key", write("m.key", "PRIVATE KEY", kder),
		"--resolve", "www.example:443:127.85.1.2", "https://www.example/").CombinedOutput()
	if got := string(out); got != "verify=18 403" {
		t.Fatalf("curl: %q, %v", got, err)
	}
}
