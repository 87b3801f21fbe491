package tlsprof

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"testing"
	"time"
)

// serveOn is serve on the package's own loopback range.
func serveOn(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.85.12.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if err := c.(*tls.Conn).Handshake(); err == nil {
					c.Write([]byte("ok"))
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

// notify-cert-status-to-virtual-server: a client certificate that fails
// verification is let in, and the verdict is the rules'.
func TestNotifyCertStatus(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	srv := p.chain(t, "srv", "ecdsa", "www.example")
	ccp, ckp := p.leaf(t, "client", "ecdsa", true, "client.example")
	good, err := tls.LoadX509KeyPair(ccp, ckp)
	if err != nil {
		t.Fatal(err)
	}
	rcp, rkp := p.leaf(t, "revoked", "ecdsa", true, "revoked.example")
	revoked, _ := tls.LoadX509KeyPair(rcp, rkp)
	other := newPKI(t)
	ocp, okp := other.leaf(t, "stranger", "ecdsa", true, "stranger.example")
	stranger, _ := tls.LoadX509KeyPair(ocp, okp)
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(time.Hour),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: revoked.Leaf.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)}},
	}, p.caCert, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := x509.ParseRevocationList(der)
	crl := &CRL{Name: "/Common/ca.crl", Lists: []*x509.RevocationList{list}}

	for _, tc := range []struct {
		mode   string
		notify bool
		cert   *tls.Certificate
		fail   bool
		result int
	}{
		{"require", false, &good, false, 0},
		{"require", false, &stranger, true, 20},
		{"require", false, &revoked, true, 23},
		{"require", true, &good, false, 0},
		{"require", true, &stranger, false, 20},
		{"require", true, &revoked, false, 23},
		{"require", true, nil, true, 0}, // none sent: still refused [M]
		{"request", false, &revoked, true, 23},
		{"request", true, &revoked, false, 23},
		{"request", true, nil, false, 0},
	} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			name := tc.mode + "/" + map[bool]string{true: "notify", false: "drop"}[tc.notify] + "/" + VersionName(ver)
			if tc.cert != nil {
				name += "/" + tc.cert.Leaf.Subject.CommonName
			}
			t.Run(name, func(t *testing.T) {
				b, err := (&ClientSSL{Name: "/Common/mtls", CertKeyChain: []CertKeyChain{srv}, PeerCertMode: tc.mode,
					CAFile: p.ca(t), CRL: crl, NotifyCertStatus: tc.notify}).Build()
				if err != nil {
					t.Fatal(err)
				}
				cc := &tls.Config{RootCAs: p.ca(t).Pool(), ServerName: "www.example", MinVersion: ver, MaxVersion: ver}
				if tc.cert != nil {
					cc.Certificates = []tls.Certificate{*tc.cert}
				}
				_, err = dial(serveOn(t, b.Config), cc)
				if tc.fail != (err != nil) {
					t.Fatalf("handshake error %v, want failure %v", err, tc.fail)
				}
				if tc.cert != nil {
					if got := b.VerifyResult([]*x509.Certificate{tc.cert.Leaf}); got != tc.result {
						t.Errorf("VerifyResult %d, want %d", got, tc.result)
					}
				}
			})
		}
	}
}
