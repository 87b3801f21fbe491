package tlsprof

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

// TestC3DOCSP: a client-ssl profile with c3d-ocsp asks openssl's
// responder about the client's certificate: good passes, revoked is
// refused, unknown and a responder that is down are refused under
// c3d-drop-unknown-ocsp-status drop and let in under ignore; a client
// without a certificate is not asked about.
func TestC3DOCSP(t *testing.T) {
	p := newOCSPPKI(t)
	good := p.server(t, "good", "V")
	revoked := p.server(t, "revoked", "R")
	unknown := p.server(t, "unknown", "")
	r := p.responder(t, "127.48.4.1:0")
	down := "http://" + closedAddr(t, "127.48.4.2")
	ca := &Cert{Name: "/Common/ca.crt", Certs: []*x509.Certificate{p.ca}}
	vcert, vkey := good.Cert, good.Key // the virtual's own certificate
	for _, tc := range []struct {
		name   string
		client *CertKeyChain
		url    string
		drop   bool
		err    string // "" = connected
	}{
		{name: "good", client: &good, url: r.URL(), drop: true},
		{name: "revoked", client: &revoked, url: r.URL(), drop: true, err: "is revoked (c3d-ocsp"},
		{name: "revoked, ignore", client: &revoked, url: r.URL(), err: "is revoked (c3d-ocsp"},
		{name: "unknown, drop", client: &unknown, url: r.URL(), drop: true, err: "OCSP status unknown"},
		{name: "unknown, ignore", client: &unknown, url: r.URL()},
		{name: "responder down, drop", client: &good, url: down, drop: true, err: "no OCSP status"},
		{name: "responder down, ignore", client: &good, url: down},
		{name: "no certificate", url: down, drop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &OCSP{Name: "/Common/v-" + strings.ReplaceAll(tc.name, " ", "-"), ResponderURL: tc.url, Timeout: 3 * time.Second, CacheErrorTimeout: time.Hour}
			b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{{Cert: vcert, Key: vkey}}, PeerCertMode: "request", CAFile: ca,
				AuthenticateDepth: -1, C3DOCSP: &C3DOCSP{Validator: o, DropUnknown: tc.drop}}).Build()
			if err != nil {
				t.Fatal(err)
			}
			verdict := make(chan error, 1) // the profile's, from the server's goroutine
			cfg := b.Config.Clone()
			prev := cfg.VerifyConnection
			cfg.VerifyConnection = func(cs tls.ConnectionState) error {
				err := prev(cs)
				select {
				case verdict <- err:
				default:
				}
				return err
			}
			at := serveAt(t, "127.48.4.1:0", cfg)
			cc := &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}
			if tc.client != nil {
				pair, err := Pair("c", tc.client.Cert, tc.client.Key, nil)
				if err != nil {
					t.Fatal(err)
				}
				cc.Certificates = []tls.Certificate{pair}
			}
			_, err = dial(at, cc)
			var seen error
			select {
			case seen = <-verdict:
			case <-time.After(5 * time.Second):
				t.Fatal("the profile's verification did not run")
			}
			if tc.err == "" && err != nil || tc.err != "" && err == nil {
				t.Fatalf("handshake: %v (the profile: %v), want %q", err, seen, tc.err)
			}
			if tc.err != "" && (seen == nil || !strings.Contains(seen.Error(), tc.err)) {
				t.Fatalf("the profile's verdict %v, want %q", seen, tc.err)
			}
		})
	}
}
