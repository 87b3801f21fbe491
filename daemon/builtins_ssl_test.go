package daemon

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBuiltinSSLCiphersServe checks that virtuals on F5's ssl built-ins
// act on the cipher strings and options they ship with:
// clientssl-insecure-compatible (!SSLv2:ALL:...) takes a client offering
// only RC4-SHA, which DEFAULT refuses; serverssl-insecure-compatible
// offers the member TLS 1.2 suites only (its string selects no TLS 1.3
// suite); the commit names the suites Go cannot do; clientssl-secure
// (no-tlsv1.3, !RC4) takes a TLS 1.2 client and refuses a TLS 1.3-only
// one and an RC4-only one.
func TestBuiltinSSLCiphersServe(t *testing.T) {
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "m.crt"), filepath.Join(dir, "m.key")
	if err := makeDefaultPair(dir, crt, key); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	// The member answers each line with the protocol and suite the
	// server-ssl side agreed to.
	ln, err := tls.Listen("tcp", "127.252.64.11:20443", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	acceptEach(ln, func(c net.Conn) {
		tc := c.(*tls.Conn)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err != nil {
			return
		}
		st := tc.ConnectionState()
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		io.WriteString(c, "M1 "+tls.VersionName(st.Version)+" "+tls.CipherSuiteName(st.CipherSuite)+"\n")
	})
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool p members add { 127.252.64.11:20443 }")
	out, errs := run(t, s, "create ltm virtual vi destination 127.252.64.1:20443 pool p profiles replace-all-with { tcp clientssl-insecure-compatible serverssl-insecure-compatible }")
	if errs != "" {
		t.Fatalf("virtual on the insecure-compatible profiles refused: %s", errs)
	}
	for _, want := range []string{
		`profile client-ssl /Common/clientssl-insecure-compatible: cipher string "!SSLv2:ALL:!DH:!ADH:!EDH:@SPEED" names suites Go's TLS cannot do, left out: `,
		`profile server-ssl /Common/serverssl-insecure-compatible: cipher string "!SSLv2:!EXPORT:!DH:RSA+RC4:RSA+AES:RSA+DES:RSA+3DES:ECDHE+AES:ECDHE+3DES:@SPEED" names suites Go's TLS cannot do, left out: AES256-SHA256, ECDHE-RSA-AES256-SHA384, RC4-MD5, DES-CBC-SHA`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("commit output lacks %q:\n%s", want, out)
		}
	}
	mustRun(t, s, "create ltm virtual vs destination 127.252.64.2:20443 pool p profiles replace-all-with { tcp clientssl-secure serverssl-insecure-compatible }")

	dial := func(addr string, cfg *tls.Config) (string, error) {
		cfg.InsecureSkipVerify = true
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "hello\n"); err != nil {
			return "", err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		return strings.TrimSpace(line), err
	}
	rc4 := []uint16{tls.TLS_RSA_WITH_RC4_128_SHA}
	for _, tc := range []struct {
		name, addr string
		cfg        *tls.Config
		ok         bool
	}{
		{"insecure-compatible, any client", "127.252.64.1:20443", &tls.Config{}, true},
		{"insecure-compatible, RC4-SHA only", "127.252.64.1:20443", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: rc4}, true},
		{"secure, TLS 1.2", "127.252.64.2:20443", &tls.Config{MaxVersion: tls.VersionTLS12}, true},
		{"secure, TLS 1.3 only", "127.252.64.2:20443", &tls.Config{MinVersion: tls.VersionTLS13}, false},
		{"secure, RC4-SHA only", "127.252.64.2:20443", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: rc4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dial(tc.addr, tc.cfg)
			if !tc.ok {
				if err == nil {
					t.Fatalf("served: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// serverssl-insecure-compatible selects no TLS 1.3 suite, so
			// the member is spoken to at TLS 1.2.
			if !strings.HasPrefix(got, "M1 TLS 1.2 TLS_") {
				t.Fatalf("answer %q, want the member's at TLS 1.2", got)
			}
		})
	}
}
