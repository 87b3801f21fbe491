package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestSSLC3DRuleForging: SSL::c3d extension, cert_lifespan and
// cert_start_date in a rule change the certificate a C3D virtual's
// member is shown for that connection (the member, requiring a
// certificate from the C3D CA, prints what it got), on a standard and an
// http virtual; a bad value is the rule's error, and the client is
// reset.
func TestSSLC3DRuleForging(t *testing.T) {
	vcert, vkey, roots := testCert(t, "www.example")
	c3dCA, c3dKey, _ := testCert(t, "C3D CA")
	userCA, userKey, _ := testCert(t, "User CA")
	alice := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "alice")
	role := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}

	// The member prints the certificate's common name, lifespan, start
	// (seconds) and the role extension's value.
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c3dCA.Certs[0])
	ln, err := tls.Listen("tcp", "127.55.6.11:8443", &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.TLS.PeerCertificates[0]
		var roleVal string
		for _, e := range c.Extensions {
			if e.Id.Equal(role) {
				var s string
				if _, err := asn1.Unmarshal(e.Value, &s); err == nil {
					roleVal = s
				} else {
					roleVal = fmt.Sprintf("%x", e.Value)
				}
			}
		}
		fmt.Fprintf(w, "cn=%s life=%dh start=%d role=%s from=%s", c.Subject.CommonName,
			int(c.NotAfter.Sub(c.NotBefore).Round(time.Hour)/time.Hour), c.NotBefore.Unix(), roleVal, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	d, err := sslfwd.NewC3D(sslfwd.C3DConfig{Name: "/Common/ss", CA: c3dCA.Certs[0], CAKey: c3dKey.Signer})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-2 * time.Hour).Unix()
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name, kind, rule string
		want             string // "": the client gets no answer
	}{
		{"standard: none", "standard", `when CLIENTSSL_HANDSHAKE { set x 1 }`, "cn=alice life=25h start="},
		{"standard: extension and lifespan", "standard",
			`when CLIENTSSL_HANDSHAKE { SSL::c3d extension 1.3.6.1.4.1.99999.1 "admin"; SSL::c3d cert_lifespan 3 }`, "cn=alice life=4h start="},
		{"standard: start date", "standard",
			fmt.Sprintf(`when CLIENTSSL_HANDSHAKE { SSL::c3d cert_start_date %d; SSL::c3d cert_lifespan 6 }`, start), fmt.Sprintf("cn=alice life=6h start=%d role= ", start)},
		{"http: extension in HTTP_REQUEST", "http",
			`when HTTP_REQUEST { SSL::c3d extension 1.3.6.1.4.1.99999.1 [HTTP::header X-Role] }`, "cn=alice life=25h start="},
		{"http: DER extension, ASN.1 start", "http",
			fmt.Sprintf(`when CLIENTSSL_HANDSHAKE { SSL::c3d extension 1.3.6.1.4.1.99999.1 [binary format H* 0c026f70]; SSL::c3d cert_start_date %s }`,
				time.Unix(start, 0).UTC().Format("20060102150405Z")), fmt.Sprintf("cn=alice life=24h start=%d role=op ", start)},
		{"standard: bad lifespan", "standard", `when CLIENTSSL_HANDSHAKE { SSL::c3d cert_lifespan 0 }`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *Config
			if tc.kind == "standard" {
				cfg = basic("127.55.6.10:443", "127.55.6.11:8443")
			} else {
				cfg = mblbConfig("127.55.6.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.55.6.11:8443")
			}
			b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: vcert, Key: vkey}},
				PeerCertMode: "request", CAFile: userCA, AuthenticateDepth: -1}).Build()
			if err != nil {
				t.Fatal(err)
			}
			cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: b.Config, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b},
				Server: serverSSL(t), C3D: d}
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			mustApply(t, p, cfg)
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.55.6.1")}}, "tcp", "127.55.6.10:443",
				&tls.Config{RootCAs: roots, ServerName: "www.example", Certificates: []tls.Certificate{alice}})
			if err != nil {
				if tc.want == "" {
					return
				}
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c3dGet(c, "X-Role: auditor")
			if tc.want == "" {
				if strings.Contains(got, "cn=") {
					t.Fatalf("a bad SSL::c3d value, yet the member saw %q", got)
				}
				return
			}
			if err != nil || !strings.Contains(got, tc.want) {
				t.Fatalf("the member saw %q (%v), want %q", got, err, tc.want)
			}
			wantRole := map[string]string{"standard: extension and lifespan": "role=admin ", "http: extension in HTTP_REQUEST": "role=auditor "}[tc.name]
			if wantRole != "" && !strings.Contains(got, wantRole) {
				t.Fatalf("the member saw %q, want %q", got, wantRole)
			}
		})
	}
}
