package dataplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// c3dClientCert is a client certificate for cn issued by ca.
func c3dClientCert(t *testing.T, ca *x509.Certificate, caKey crypto.Signer, cn string) tls.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: []string{"Users"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour), EmailAddresses: []string{cn + "@example.com"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k, Leaf: leaf}
}

// startC3DMember is an HTTP member at addr over TLS that requires a
// client certificate issued by ca and answers with what it was shown:
// the subject's common name, the issuer's, the e-mail SAN, the lifespan
// in hours and its client's address (which tells connections apart).
func startC3DMember(t *testing.T, addr string, ca *x509.Certificate) {
	t.Helper()
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.TLS.PeerCertificates[0]
		fmt.Fprintf(w, "cn=%s issuer=%s email=%s life=%dh from=%s", c.Subject.CommonName, c.Issuer.CommonName,
			strings.Join(c.EmailAddresses, ","), int(c.NotAfter.Sub(c.NotBefore).Round(time.Hour)/time.Hour), r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestSSLC3D: a virtual with client-ssl (client certificates requested)
// and server-ssl with C3D shows the member a certificate of the client's
// subject issued by the C3D CA, on a standard virtual and an http one
// (with and without OneConnect, which must not lend one client's member
// connection to another); a client without a certificate is delegated
// as the fallback certificate, or not at all.
func TestSSLC3D(t *testing.T) {
	vcert, vkey, roots := testCert(t, "www.example")
	c3dCA, c3dKey, _ := testCert(t, "C3D CA")
	userCA, userKey, _ := testCert(t, "User CA")
	alice := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "alice")
	bob := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "bob")
	anon := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "anonymous")
	startC3DMember(t, "127.48.1.11:8443", c3dCA.Certs[0])
	const lifespan = 6
	for _, kind := range []string{"standard", "http", "http-oneconnect"} {
		for _, fb := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fallback=%v", kind, fb), func(t *testing.T) {
				p, _ := newPlane(t)
				var cfg *Config
				if kind == "standard" {
					cfg = basic("127.48.1.10:443", "127.48.1.11:8443")
				} else {
					cfg = mblbConfig("127.48.1.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.48.1.11:8443")
					if kind == "http-oneconnect" {
						cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
					}
				}
				b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: vcert, Key: vkey}},
					PeerCertMode: "request", CAFile: userCA, AuthenticateDepth: -1}).Build()
				if err != nil {
					t.Fatal(err)
				}
				ccfg, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
				if err != nil {
					t.Fatal(err)
				}
				c3d := sslfwd.C3DConfig{Name: "/Common/ss", CA: c3dCA.Certs[0], CAKey: c3dKey.Signer, Lifespan: lifespan * time.Hour}
				if fb {
					c3d.Fallback = anon.Leaf
				}
				d, err := sslfwd.NewC3D(c3d)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: ccfg, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b},
					Server: serverSSL(t), C3D: d}
				mustApply(t, p, cfg)

				// Two clients kept open side by side, then one without a
				// certificate.
				var conns []*tls.Conn
				for _, who := range []string{"alice", "bob", "alice", "bob", ""} {
					tc := &tls.Config{RootCAs: roots, ServerName: "www.example"}
					switch who {
					case "alice":
						tc.Certificates = []tls.Certificate{alice}
					case "bob":
						tc.Certificates = []tls.Certificate{bob}
					}
					c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.48.1.10:443", tc)
					if err != nil {
						t.Fatal(err)
					}
					conns = append(conns, c)
					defer c.Close()
					got, err := c3dGet(c)
					want := who
					if who == "" {
						want = map[bool]string{true: "anonymous", false: ""}[fb]
					}
					if want == "" {
						if err == nil && !strings.HasPrefix(got, "HTTP/1.1 5") {
							t.Fatalf("a client without a certificate and no fallback reached the member: %q", got)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", who, err)
					}
					if w := fmt.Sprintf("cn=%s issuer=C3D CA email=%s@example.com life=%dh ", want, want, lifespan+1); !strings.Contains(got, w) {
						t.Fatalf("%s: the member saw %q, want %q", who, got, w)
					}
				}
				// A second request on alice's first connection: still alice,
				// whatever connection OneConnect gave it.
				if got, err := c3dGet(conns[0]); err != nil || !strings.Contains(got, "cn=alice ") {
					t.Fatalf("alice again: %q %v", got, err)
				}
				if n := d.Cached(); n != 2+map[bool]int{true: 1}[fb] {
					t.Fatalf("forged certificates kept: %d", n)
				}
			})
		}
	}
}

// c3dVirtual is a virtual at 127.48.1.20:443 (kind standard or http)
// to the C3D member at 127.48.1.21:8443, its client-ssl requesting
// certificates of userCA, its server-ssl delegating by d.
func c3dVirtual(t *testing.T, kind string, vcert *tlsprof.Cert, vkey *tlsprof.Key, userCA *tlsprof.Cert, d *sslfwd.C3D) *Config {
	t.Helper()
	var cfg *Config
	if kind == "standard" {
		cfg = basic("127.48.1.20:443", "127.48.1.21:8443")
	} else {
		cfg = mblbConfig("127.48.1.20:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.48.1.21:8443")
	}
	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: vcert, Key: vkey}},
		PeerCertMode: "request", CAFile: userCA, AuthenticateDepth: -1}).Build()
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: ccfg, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b},
		Server: serverSSL(t), C3D: d}
	return cfg
}

// TestSSLC3DRules: SSL::c3d subject commonName in CLIENTSSL_HANDSHAKE
// renames the subject the member sees; SSL::c3d cert in HTTP_REQUEST
// delegates a certificate another proxy passed in a header.
func TestSSLC3DRules(t *testing.T) {
	vcert, vkey, roots := testCert(t, "www.example")
	c3dCA, c3dKey, _ := testCert(t, "C3D CA")
	userCA, userKey, _ := testCert(t, "User CA")
	alice := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "alice")
	bob := c3dClientCert(t, userCA.Certs[0], userKey.Signer, "bob")
	startC3DMember(t, "127.48.1.21:8443", c3dCA.Certs[0])
	d, err := sslfwd.NewC3D(sslfwd.C3DConfig{Name: "/Common/ss", CA: c3dCA.Certs[0], CAKey: c3dKey.Signer})
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(bob.Certificate[0])
	for _, tc := range []struct {
		name, kind, rule string
		cert             *tls.Certificate
		head             []string
		want             string
	}{
		{"standard: subject", "standard", `when CLIENTSSL_HANDSHAKE { SSL::c3d subject commonName "svc gateway" }`, &alice, nil, "cn=svc gateway issuer=C3D CA email=alice@example.com "},
		{"http: subject", "http", `when CLIENTSSL_HANDSHAKE { SSL::c3d subject commonName "svc gateway" }`, &alice, nil, "cn=svc gateway issuer=C3D CA email=alice@example.com "},
		{"http: cert from a header", "http", `when HTTP_REQUEST { if { [HTTP::header exists X-Cert] } { SSL::c3d cert [b64decode [HTTP::header X-Cert]] } }`,
			nil, []string{"X-Cert: " + b64}, "cn=bob issuer=C3D CA email=bob@example.com "},
		{"standard: subject at the member's hello", "standard", `when SERVERSSL_CLIENTHELLO_SEND { SSL::c3d subject commonName "late" }`, &alice, nil, "cn=late issuer=C3D CA email=alice@example.com "},
		{"http: subject at the member's hello", "http", `when SERVERSSL_CLIENTHELLO_SEND { SSL::c3d subject commonName "late" }`, &alice, nil, "cn=late issuer=C3D CA email=alice@example.com "},
		{"http: header and subject", "http", `when HTTP_REQUEST { SSL::c3d cert [b64decode [HTTP::header X-Cert]]; SSL::c3d subject commonName "b2" }`,
			&alice, []string{"X-Cert: " + b64}, "cn=b2 issuer=C3D CA email=bob@example.com "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := c3dVirtual(t, tc.kind, vcert, vkey, userCA, d)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			mustApply(t, p, cfg)
			cc := &tls.Config{RootCAs: roots, ServerName: "www.example"}
			if tc.cert != nil {
				cc.Certificates = []tls.Certificate{*tc.cert}
			}
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.48.1.20:443", cc)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c3dGet(c, tc.head...)
			if err != nil || !strings.Contains(got, tc.want) {
				t.Fatalf("the member saw %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// c3dGet sends one HTTP request on c and returns the answer's head and
// body.
func c3dGet(c *tls.Conn, head ...string) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: www.example\r\n"
	for _, h := range head {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	var out []byte
	for !strings.Contains(string(out), "from=") {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return string(out), err
		}
	}
	return string(out), nil
}
