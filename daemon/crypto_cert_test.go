package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

func TestCryptoCerts(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	p := newTestPKI(t)
	now := time.Now()
	mk := func(name, cn string, notAfter time.Time) string {
		k, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		p.serial++
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial),
			Subject:   pkix.Name{CommonName: cn, Organization: []string{"Example"}, Country: []string{"US"}},
			NotBefore: now.Add(-400 * 24 * time.Hour), NotAfter: notAfter,
			DNSNames: []string{cn}, IPAddresses: []net.IP{net.ParseIP("127.5.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
		if err != nil {
			t.Fatal(err)
		}
		return p.write(t, name, "CERTIFICATE", der)
	}
	mustRun(t, s,
		"create sys file ssl-cert old.crt source-path file:"+mk("old.pem", "old.example.com", now.Add(-48*time.Hour)),
		"create sys file ssl-cert soon.crt source-path file:"+mk("soon.pem", "soon.example.com", now.Add(10*24*time.Hour)),
		"create sys file ssl-cert good.crt source-path file:"+mk("good.pem", "good.example.com", now.Add(300*24*time.Hour)))

	out, err := run(t, s, "list sys crypto cert soon.crt")
	for _, w := range []string{"sys crypto cert soon.crt {\n", "    certificate-key-size 384\n", "    common-name soon.example.com\n",
		"    key-type ec-public\n", "    organization Example\n", `    subject-alternative-name "DNS:soon.example.com, IP Address:127.5.0.1"` + "\n", "    expiration \""} {
		if !strings.Contains(out, w) {
			t.Errorf("list: want %q in\n%s%s", w, out, err)
		}
	}
	if strings.Contains(out, "old.crt") {
		t.Errorf("list of one certificate lists others:\n%s", out)
	}
	if _, err := run(t, s, "list sys crypto cert nope.crt"); !strings.Contains(err, "was not found") {
		t.Errorf("list of a missing certificate: %q", err)
	}

	for _, c := range []struct {
		cmd       string
		want, not []string
		err       string
	}{
		{cmd: "run sys crypto check-cert", want: []string{"CN=old.example.com,O=Example,C=US in /Common/old.crt expired on ", "in /Common/soon.crt will expire on "}, not: []string{"good.crt"}},
		{cmd: "run sys crypto check-cert verbose enabled", want: []string{"in /Common/good.crt is valid until ", "old.crt expired"}},
		{cmd: "run sys crypto check-cert days 5", want: []string{"old.crt expired"}, not: []string{"soon.crt"}},
		{cmd: "run sys crypto check-cert days 400", want: []string{"good.crt will expire"}},
		{cmd: "run sys crypto check-cert days x", err: "days takes a number"},
		{cmd: "run sys crypto check-cert colour red", err: `"colour" unknown property`},
	} {
		out, err := run(t, s, c.cmd)
		if c.err != "" {
			if !strings.Contains(err, c.err) {
				t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
			}
			continue
		}
		if err != "" {
			t.Errorf("%s: %s", c.cmd, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q in\n%s", c.cmd, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", c.cmd, w, out)
			}
		}
	}
}
