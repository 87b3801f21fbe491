package daemon

import (
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
	"strings"
	"testing"
	"time"
)

// TestSSLForwardProxyCALifespan: the certificates an SSL forward proxy
// forges last cert-lifespan days, or proxy-ca-lifespan's where the
// profile (or its parent) sets it, as a real TLS client through the
// virtual sees them; a proxy-ca-lifespan out of bounds is refused and
// the virtual keeps forging as before.
func TestSSLForwardProxyCALifespan(t *testing.T) {
	pki := newTestPKI(t)
	// A proxy CA of ten years, so the lifespans are not cut at its end.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "openltm proxy CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	caCrt := pki.write(t, "proxyca.crt", "CERTIFICATE", der)
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	caKey := pki.write(t, "proxyca.key", "PRIVATE KEY", kd)

	// The origin: TLS with a certificate of the test PKI.
	leafCrt, leafKey := pki.leaf(t, "origin", "origin.example", false)
	pair, err := tls.LoadX509KeyPair(leafCrt, leafKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.90.6.11:4433", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	acceptEach(ln, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "origin\n")
		io.Copy(io.Discard, c)
	})

	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create sys file ssl-cert proxyca.crt source-path file:"+caCrt,
		"create sys file ssl-key proxyca.key source-path file:"+caKey,
		"create sys file ssl-cert origin_ca.crt source-path file:"+pki.dir+"/ca.crt",
		"create ltm pool p members add { 127.90.6.11:4433 }",
		"create ltm profile server-ssl ss ssl-forward-proxy enabled ca-file origin_ca.crt",
		"create ltm profile client-ssl cs_parent ssl-forward-proxy enabled proxy-ca-cert proxyca.crt proxy-ca-key proxyca.key",
		"create ltm profile client-ssl cs defaults-from cs_parent",
		"create ltm virtual vs destination 127.90.6.10:443 pool p profiles replace-all-with { tcp cs ss }",
	)
	forgedDays := func() float64 {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.90.6.10:443",
			&tls.Config{ServerName: "origin.example", InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("through the forward proxy: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line := make([]byte, 7)
		if _, err := io.ReadFull(c, line); err != nil || string(line) != "origin\n" {
			t.Fatalf("from the origin: %q %v", line, err)
		}
		leaf := c.ConnectionState().PeerCertificates[0]
		if leaf.Issuer.CommonName != "openltm proxy CA" {
			t.Fatalf("not forged: issuer %s", leaf.Issuer)
		}
		// Valid from an hour before the forging.
		return (leaf.NotAfter.Sub(leaf.NotBefore) - time.Hour).Hours() / 24
	}
	for _, tc := range []struct {
		name, modify string
		days         float64
		wantErr      string
	}{
		{"cert-lifespan default", "", 30, ""},
		{"cert-lifespan", "modify ltm profile client-ssl cs cert-lifespan 10", 10, ""},
		{"proxy-ca-lifespan", "modify ltm profile client-ssl cs proxy-ca-lifespan 5", 5, ""},
		{"proxy-ca-lifespan at its default", "modify ltm profile client-ssl cs proxy-ca-lifespan 365", 365, ""},
		{"proxy-ca-lifespan from the parent", "create ltm profile client-ssl cs2 defaults-from cs_parent; modify ltm profile client-ssl cs_parent proxy-ca-lifespan 3; modify ltm virtual vs profiles replace-all-with { tcp cs2 ss }", 3, ""},
		{"proxy-ca-lifespan 0", "modify ltm profile client-ssl cs2 proxy-ca-lifespan 0", 3, "proxy-ca-lifespan 0: days from 1 to 3650"},
		{"proxy-ca-lifespan too long", "modify ltm profile client-ssl cs2 proxy-ca-lifespan 3651", 3, "days from 1 to 3650"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.modify != "" {
				for _, cmd := range strings.Split(tc.modify, "; ") {
					_, err := run(t, s, cmd)
					switch {
					case tc.wantErr == "" && err != "":
						t.Fatalf("%s: %s", cmd, err)
					case tc.wantErr != "" && !strings.Contains(err, tc.wantErr):
						t.Fatalf("%s: error %q, want %q", cmd, err, tc.wantErr)
					}
				}
			}
			if got := forgedDays(); got < tc.days-0.01 || got > tc.days+0.01 {
				t.Fatalf("forged certificate valid %s days, want %v", fmt.Sprintf("%.3f", got), tc.days)
			}
		})
	}
}
