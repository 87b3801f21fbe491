package ipfix

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ipfix/ipfixtest"
)

// collectorCert is a self-signed certificate for 127.167.1.1, and a
// pool holding it, for a collector's side of TLS.
func collectorCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "collector.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.167.1.1")}, DNSNames: []string{"collector.example"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestExportTLS: with a serverssl-profile, each collector's TCP
// connection is a TLS session: the records and their template arrive
// through it, decoded as over TCP; a collector whose certificate the
// profile does not trust gets nothing, the failed handshakes counted.
func TestExportTLS(t *testing.T) {
	cert, roots := collectorCert(t)
	srv := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	cases := []struct {
		name   string
		addr   string
		client *tls.Config
		want   int // records decoded; 0: the handshakes fail
	}{
		{"any certificate", "127.167.1.1:0", &tls.Config{InsecureSkipVerify: true}, 3},
		{"trusted", "127.167.1.1:0", &tls.Config{RootCAs: roots, ServerName: "collector.example"}, 3},
		{"untrusted", "127.167.1.1:0", &tls.Config{RootCAs: x509.NewCertPool(), ServerName: "collector.example"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, addr, conns := ipfixtest.TLS(t, tc.addr, srv)
			ts := NewTemplates()
			x := NewExporter(Options{Pool: "p", Members: fixed(addr), TCP: true, TLS: tc.client, Logger: quiet()})
			defer x.Close()
			if st := x.Stats(); !st.TLS {
				t.Fatalf("Stats().TLS false for a TLS exporter")
			}
			tm := flowTemplate(t, ts)
			if tc.want == 0 {
				x.Send(flowRecord(t, tm, 0))
				ipfixtest.WaitFor(t, "a failed handshake", func() bool { return x.Stats().Failures > 0 })
				if msgs, _ := c.Snapshot(); len(msgs) != 0 || conns() != 0 {
					t.Fatalf("%d messages over %d sessions to an untrusted collector", len(msgs), conns())
				}
				return
			}
			for i := range tc.want {
				x.Send(flowRecord(t, tm, i))
			}
			ipfixtest.WaitFor(t, "the records", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == tc.want })
			msgs, errs := c.Snapshot()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if _, ok := msgs[0].Templates[tm.ID]; !ok || conns() != 1 {
				t.Fatalf("first message has no template (%v) or %d sessions, want 1", msgs[0].Templates, conns())
			}
		})
	}
}
