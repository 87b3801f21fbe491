package tlsprof

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// handshakeTap notes the plaintext handshake messages a TLS 1.2 peer
// sends (every handshake record before its ChangeCipherSpec).
type handshakeTap struct {
	net.Conn
	mu   sync.Mutex
	raw  []byte
	hs   []byte
	done bool
}

func (h *handshakeTap) Read(b []byte) (int, error) {
	n, err := h.Conn.Read(b)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.raw = append(h.raw, b[:n]...)
	for !h.done && len(h.raw) >= 5 {
		l := int(h.raw[3])<<8 | int(h.raw[4])
		if len(h.raw) < 5+l {
			break
		}
		switch h.raw[0] {
		case 22:
			h.hs = append(h.hs, h.raw[5:5+l]...)
		case 20:
			h.done = true
		}
		h.raw = h.raw[5+l:]
	}
	return n, err
}

// scheme is the signature scheme of the handshake message of type typ
// (12 ServerKeyExchange of an ECDHE suite, 15 CertificateVerify); 0 when
// none was seen.
func (h *handshakeTap) scheme(typ byte) tls.SignatureScheme {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.hs
	for len(m) >= 4 {
		l := int(m[1])<<16 | int(m[2])<<8 | int(m[3])
		if len(m) < 4+l {
			return 0
		}
		body := m[4 : 4+l]
		if m[0] == typ {
			if typ == 12 && len(body) > 4 {
				body = body[4+int(body[3]):] // curve type, curve, public key
			}
			if len(body) >= 2 {
				return tls.SignatureScheme(uint16(body[0])<<8 | uint16(body[1]))
			}
			return 0
		}
		m = m[4+l:]
	}
	return 0
}

// TestSignHash: ssl-sign-hash picks the hash of the server's
// ServerKeyExchange signature (client-ssl) and of the client
// certificate's CertificateVerify (server-ssl), read from the TLS 1.2
// handshake as a Go peer sees it; sha1 needs GODEBUG tlssha1=1.
func TestSignHash(t *testing.T) {
	p := newPKI(t)
	rsaCK := p.chain(t, "sh-rsa", "rsa", "sh.example")
	ecCK := p.chain(t, "sh-ec", "ecdsa", "sh.example")
	for _, tc := range []struct {
		hash  string
		ck    CertKeyChain
		want  tls.SignatureScheme
		sha1  bool // run with GODEBUG tlssha1=1
		error string
	}{
		{hash: "any", ck: rsaCK, want: tls.PSSWithSHA256},
		{hash: "sha256", ck: rsaCK, want: tls.PSSWithSHA256},
		{hash: "sha384", ck: rsaCK, want: tls.PSSWithSHA384},
		{hash: "any", ck: ecCK, want: tls.ECDSAWithP256AndSHA256},
		{hash: "sha384", ck: ecCK, want: tls.ECDSAWithP384AndSHA384},
		{hash: "sha1", ck: rsaCK, sha1: true, want: tls.PKCS1WithSHA1},
		{hash: "sha1", ck: ecCK, sha1: true, want: tls.ECDSAWithSHA1},
		{hash: "sha1", ck: rsaCK, error: "GODEBUG=tlssha1=1"},
		{hash: "md5", ck: rsaCK, error: `ssl-sign-hash "md5" is not valid`},
	} {
		name := tc.hash + "/" + tc.ck.Name
		t.Run(name, func(t *testing.T) {
			godebug := ""
			if tc.sha1 {
				godebug = "tlssha1=1"
			}
			t.Setenv("GODEBUG", godebug)
			// client-ssl: the server's signature.
			b, err := (&ClientSSL{Name: "/Common/sh", CertKeyChain: []CertKeyChain{tc.ck}, SignHash: tc.hash}).Build()
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("client-ssl: got %v, want an error with %q", err, tc.error)
				}
				_, err = (&ServerSSL{Name: "/Common/sh", SignHash: tc.hash}).Build()
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("server-ssl: got %v, want an error with %q", err, tc.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c1, c2 := net.Pipe()
			go func() {
				srv := tls.Server(c1, b.Config)
				srv.SetDeadline(time.Now().Add(5 * time.Second))
				srv.Handshake()
				c1.Close() // net.Pipe: a close_notify would wait for a reader
			}()
			tap := &handshakeTap{Conn: c2}
			cli := tls.Client(tap, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
			cli.SetDeadline(time.Now().Add(5 * time.Second))
			if err := cli.Handshake(); err != nil {
				t.Fatal(err)
			}
			c2.Close()
			if got := tap.scheme(12); got != tc.want {
				t.Errorf("client-ssl ssl-sign-hash %s: ServerKeyExchange signed with %v, want %v", tc.hash, got, tc.want)
			}
			if tc.hash == "sha1" && b.Config.MaxVersion != tls.VersionTLS12 {
				t.Errorf("ssl-sign-hash sha1 left TLS 1.3 on")
			}

			// server-ssl: the client certificate's signature.
			ccp, ckp := p.leaf(t, "sh-client-"+tc.ck.Name, map[bool]string{true: "rsa", false: "ecdsa"}[tc.ck.Name == "sh-rsa"], true, "client.example")
			cc, _ := LoadCert("/Common/c.crt", ccp)
			ck, _ := LoadKey("/Common/c.key", ckp, "")
			sb, err := (&ServerSSL{Name: "/Common/sh", Cert: cc, Key: ck, SignHash: tc.hash}).Build()
			if err != nil {
				t.Fatal(err)
			}
			member := mustPair(t, tc.ck)
			s1, s2 := net.Pipe()
			stap := &handshakeTap{Conn: s1}
			done := make(chan error, 1)
			go func() {
				srv := tls.Server(stap, &tls.Config{Certificates: []tls.Certificate{member}, ClientAuth: tls.RequireAnyClientCert, MaxVersion: tls.VersionTLS12})
				srv.SetDeadline(time.Now().Add(5 * time.Second))
				done <- srv.Handshake()
				s1.Close()
			}()
			cli = tls.Client(s2, sb.Config)
			cli.SetDeadline(time.Now().Add(5 * time.Second))
			cli.Handshake()
			s2.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := stap.scheme(15); got != tc.want {
				t.Errorf("server-ssl ssl-sign-hash %s: CertificateVerify signed with %v, want %v", tc.hash, got, tc.want)
			}
		})
	}
}

func mustPair(t *testing.T, ck CertKeyChain) tls.Certificate {
	t.Helper()
	c, err := Pair("/Common/p", ck.Cert, ck.Key, ck.Chain)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSignHashOpenSSL: over TLS 1.3 and 1.2, openssl s_client reports the
// digest of the signature a client-ssl profile made.
func TestSignHashOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	p := newPKI(t)
	ck := p.chain(t, "sho", "rsa", "sho.example")
	for _, tc := range []struct{ hash, version, want string }{
		{"sha384", "-tls1_3", "SHA384"},
		{"sha256", "-tls1_3", "SHA256"},
		{"sha384", "-tls1_2", "SHA384"},
		{"any", "-tls1_3", "SHA256"},
	} {
		b, err := (&ClientSSL{Name: "/Common/sho", CertKeyChain: []CertKeyChain{ck}, SignHash: tc.hash}).Build()
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tls.Listen("tcp", "127.55.0.1:0", b.Config)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.(*tls.Conn).Handshake()
			io.WriteString(c, "ok\n")
			c.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, "openssl", "s_client", "-connect", ln.Addr().String(), tc.version)
		cmd.Stdin = strings.NewReader("")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		cancel()
		ln.Close()
		if err != nil || !strings.Contains(out.String(), "Peer signing digest: "+tc.want) {
			t.Errorf("ssl-sign-hash %s %s: want digest %s: %v\n%s", tc.hash, tc.version, tc.want, err, out.String())
		}
	}
}
