package gslb

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func pemKey(t *testing.T, k any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestParseHPKEKey(t *testing.T) {
	x, _ := ecdh.X25519().GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	r, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecDER, _ := x509.MarshalECPrivateKey(p256)
	cases := []struct {
		name string
		pem  []byte
		kem  uint16 // 0: refused
		want string
	}{
		{"x25519", pemKey(t, x), hpkeKEMX25519, ""},
		{"p-256 pkcs8", pemKey(t, p256), hpkeKEMP256, ""},
		{"p-256 sec1", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), hpkeKEMP256, ""},
		{"rsa", pemKey(t, r), 0, "HPKE needs an X25519"},
		{"not pem", []byte("hello"), 0, "no PEM block"},
		{"a certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}), 0, "not a private key"},
		{"encrypted", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), 0, "encrypted"},
	}
	for _, c := range cases {
		pub, err := ParseHPKEKey(c.pem)
		if c.kem == 0 {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		list, err := ECHConfigList(pub, "public.ex.test")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		// list(2) version(2) length(2) config_id(1) kem_id(2)
		if kem := uint16(list[7])<<8 | uint16(list[8]); kem != c.kem {
			t.Errorf("%s: kem 0x%04x, want 0x%04x", c.name, kem, c.kem)
		}
	}
	if _, err := ECHConfigList(x.PublicKey(), ""); err == nil {
		t.Error("an empty public_name was taken")
	}
}

// TestHPKEKeyECHHandshake: the ECHConfigList built from a key, answered
// in an HTTPS record over UDP, lets crypto/tls's client encrypt its
// ClientHello to a TLS server holding the private key: the server sees
// the inner name and says ECH was accepted. A list built from another
// key is rejected by that server.
func TestHPKEKeyECHHandshake(t *testing.T) {
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParseHPKEKey(pemKey(t, priv))
	if err != nil {
		t.Fatal(err)
	}
	list, err := ECHConfigList(pub, "public.ex.test")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdh.X25519().GenerateKey(rand.Reader)
	otherList, _ := ECHConfigList(other.PublicKey(), "public.ex.test")

	listen := freeAddr(t, "127.204.30.53")
	cfg := &Config{
		Listeners: []Listener{{Name: "/Common/dns", Addr: listen}},
		Pools: map[string]*Pool{
			"https /Common/h": {Name: "/Common/h", Type: TypeHTTPS, Members: []PoolMember{
				{Target: "public.ex.test", StaticTarget: true, Priority: 1, SVCB: SVCBParams{ALPN: []string{"h2"}, ECH: list}}}},
			"https /Common/o": {Name: "/Common/o", Type: TypeHTTPS, Members: []PoolMember{
				{Target: "public.ex.test", StaticTarget: true, Priority: 1, SVCB: SVCBParams{ECH: otherList}}}},
		},
		WideIPs: map[string]*WideIP{
			"https /Common/secret.ex.test": {Name: "/Common/secret.ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/h"}}},
			"https /Common/other.ex.test":  {Name: "/Common/other.ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/o"}}},
		},
	}
	newServer(t, cfg, Options{})

	// The TLS server behind the target: the outer name's certificate
	// and the inner one's, and the HPKE private key.
	echCfg := list[2:] // the list's one ECHConfig
	outer, inner := selfSigned(t, "public.ex.test"), selfSigned(t, "secret.ex.test")
	roots := x509.NewCertPool()
	for _, c := range []tls.Certificate{outer, inner} {
		x, _ := x509.ParseCertificate(c.Certificate[0])
		roots.AddCert(x)
	}
	srvTLS := &tls.Config{
		Certificates:             []tls.Certificate{outer, inner},
		EncryptedClientHelloKeys: []tls.EncryptedClientHelloKey{{Config: echCfg, PrivateKey: priv.Bytes(), SendAsRetry: true}},
		MinVersion:               tls.VersionTLS13,
	}
	ln, err := tls.Listen("tcp", "127.204.30.80:0", srvTLS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for i := 0; i < 8; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if tc := c.(*tls.Conn); tc.Handshake() == nil {
					st := tc.ConnectionState()
					tc.Write([]byte(st.ServerName + " " + map[bool]string{true: "ech", false: "plain"}[st.ECHAccepted] + "\n"))
				}
			}()
		}
	}()

	echFromDNS := func(name string) []byte {
		m := queryNet(t, netip.MustParseAddr("127.204.30.5"), listen, "udp", name, dns.TypeHTTPS)
		for _, rr := range m.Answer {
			if h, ok := rr.(*dns.HTTPS); ok {
				for _, kv := range h.Value {
					if e, ok := kv.(*dns.SVCBECHConfig); ok {
						return e.ECH
					}
				}
			}
		}
		t.Fatalf("%s: no ech in %v", name, m)
		return nil
	}
	dial := func(ech []byte) (string, error) {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), &tls.Config{
			ServerName: "secret.ex.test", RootCAs: roots, MinVersion: tls.VersionTLS13,
			EncryptedClientHelloConfigList: ech,
		})
		if err != nil {
			return "", err
		}
		defer c.Close()
		if !c.ConnectionState().ECHAccepted {
			return "", nil
		}
		b := make([]byte, 64)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := c.Read(b)
		return strings.TrimSpace(string(b[:n])), nil
	}
	got, err := dial(echFromDNS("secret.ex.test."))
	if err != nil || got != "secret.ex.test ech" {
		t.Errorf("with the answer's ech: %q, %v; want the server to see secret.ex.test over ECH", got, err)
	}
	var rej *tls.ECHRejectionError
	if got, err := dial(echFromDNS("other.ex.test.")); !errors.As(err, &rej) {
		t.Errorf("with another key's ech: %q, %v; want the server to reject ECH", got, err)
	} else if !bytes.Equal(rej.RetryConfigList, list) {
		t.Errorf("the server's retry configs %x are not the list built from its key %x", rej.RetryConfigList, list)
	}
}

func selfSigned(t *testing.T, name string) tls.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
}
