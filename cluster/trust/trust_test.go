package trust

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"
)

func TestIssueVerify(t *testing.T) {
	root, err := NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewDomain("Other")
	if err != nil {
		t.Fatal(err)
	}
	id, err := root.Issue("bigip1", "127.0.0.1", "bigip1.example")
	if err != nil {
		t.Fatal(err)
	}
	if id.Device != "bigip1" || len(id.Cert.IPAddresses) != 1 || id.Cert.DNSNames[0] != "bigip1.example" {
		t.Fatalf("identity: %s %v %v", id.Device, id.Cert.IPAddresses, id.Cert.DNSNames)
	}
	if err := id.Verify(root.CertPEM()); err != nil {
		t.Fatalf("own domain: %v", err)
	}
	err = id.Verify(other.CertPEM())
	if err == nil || !strings.Contains(err.Error(), "Device bigip1 is not in the trust domain") {
		t.Fatalf("other domain: %v", err)
	}
	if len(strings.Split(id.Fingerprint(), ":")) != 32 {
		t.Fatalf("fingerprint %s", id.Fingerprint())
	}
}

func TestSignRequestKeyStaysHome(t *testing.T) {
	root, _ := NewDomain("Root")
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	csr, err := Request("bigip2", key, "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := root.Sign(csr)
	if err != nil {
		t.Fatal(err)
	}
	kp, _ := keyPEM(key)
	id, err := LoadIdentity(cert, kp, root.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	if id.Device != "bigip2" {
		t.Fatalf("device %q", id.Device)
	}
	// Someone else's key with this certificate is refused.
	k2, _ := NewKey()
	kp2, _ := keyPEM(k2)
	if _, err := LoadIdentity(cert, kp2, root.CertPEM()); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("wrong key: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	root, _ := NewDomain("Root")
	key, _ := NewKey()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"empty domain", func() error { _, err := NewDomain(""); return err }, "trust domain name is empty"},
		{"bad device name", func() error { _, err := Request("big ip", key); return err }, `device name "big ip": ' ' is not allowed`},
		{"not a csr", func() error { _, err := root.Sign([]byte("hello")); return err }, "not a PEM CERTIFICATE REQUEST"},
		{"load non-CA", func() error {
			id, _ := root.Issue("bigip1")
			_, err := LoadDomain("Root", id.CertPEM(), id.KeyPEM())
			return err
		}, "is not a CA"},
		{"load mismatched CA key", func() error {
			other, _ := NewDomain("Other")
			kp, _ := other.KeyPEM()
			_, err := LoadDomain("Root", root.CertPEM(), kp)
			return err
		}, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFilesRoundTripAndDomainReload(t *testing.T) {
	root, _ := NewDomain("Root")
	id, _ := root.Issue("bigip1")
	dir := t.TempDir()
	f, err := id.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(f.KeyFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", st.Mode(), err)
	}
	back, err := ReadFiles(f)
	if err != nil || back.Fingerprint() != id.Fingerprint() {
		t.Fatalf("read back: %v", err)
	}
	kp, _ := root.KeyPEM()
	again, err := LoadDomain("Root", root.CertPEM(), kp)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := again.Issue("bigip2")
	if err != nil || id2.Verify(root.CertPEM()) != nil {
		t.Fatalf("reloaded domain issues: %v", err)
	}
}

// A TLS server that requires the domain's certificates accepts a member and
// refuses a device of another domain: the mechanism etcd applies.
func TestMutualTLS(t *testing.T) {
	root, _ := NewDomain("Root")
	other, _ := NewDomain("Other")
	srv, _ := root.Issue("etcd", "127.0.0.1")
	member, _ := root.Issue("bigip1")
	stranger, _ := other.Issue("bigip9")

	pool := srv.ClientTLS().RootCAs
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: srv.ClientTLS().Certificates,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	dial := func(id *Identity) error {
		cfg := id.ClientTLS()
		cfg.RootCAs = pool // the stranger still knows our server's CA
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		_, err = c.Read(buf)
		return err
	}
	if err := dial(member); err != nil {
		t.Fatalf("member refused: %v", err)
	}
	if err := dial(stranger); err == nil {
		t.Fatal("a device of another domain was accepted")
	}
}
