package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestTLSSSLCollect runs SSL::collect on both sides of a standard virtual
// that terminates TLS and re-encrypts to a TLS member: CLIENTSSL_DATA sees
// the client's first decrypted bytes before any member is chosen (the
// rule routes on them, strips a tag, or answers the client over TLS with
// SSL::respond without a member; once released, the client's later bytes
// pass untouched), and SERVERSSL_DATA sees each of the member's decrypted
// answers and edits it (collecting again after each release), for real
// TLS clients.
func TestTLSSSLCollect(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startTLSServer(t, "127.90.1.11:9443", "A", mcert, mkey)
	startTLSServer(t, "127.90.1.12:9443", "B", mcert, mkey)
	p, _ := newPlane(t)
	rule := `
when CLIENTSSL_HANDSHAKE { SSL::collect 5 }
when CLIENTSSL_DATA {
    switch -- [SSL::payload 5] {
        "BLUE " { pool blue; SSL::payload replace 0 5 "" }
        "PING\n" {
            SSL::respond "PONG [SSL::payload length] [SSL::cipher version]\n"
            SSL::payload replace 0 5 ""
        }
    }
    SSL::release
}
when SERVERSSL_HANDSHAKE { SSL::collect }
when SERVERSSL_DATA {
    SSL::payload replace 0 0 "dec([SSL::payload length])|"
    SSL::release
    SSL::collect
}`
	cfg := basic("127.90.1.10:443", "127.90.1.11:9443")
	cfg.Pools["/Common/blue"] = &Pool{Name: "/Common/blue", LBMode: RoundRobin, Members: []Member{{Node: "/Common/127.90.1.12", Addr: ap("127.90.1.12:9443")}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server, cfg.Virtuals["/Common/vs"].TLS.ServerProfile = serverSSL(t), "/Common/ss"
	mustApply(t, p, cfg)

	cases := []struct {
		name  string
		tls12 bool
		send  []string // each line, answered by one line
		want  []string
	}{
		{name: "default pool", send: []string{"hello", "again"}, want: []string{"dec(15)|A Response tls", "dec(15)|A Response tls"}},
		{name: "routed on the first bytes", send: []string{"BLUE x", "y"}, want: []string{"dec(15)|B Response tls", "dec(15)|B Response tls"}},
		{name: "answered without a member", send: []string{"PING", "after"}, want: []string{"PONG 5 TLSv1.3", "dec(15)|A Response tls"}},
		// Released, the client side is no longer collected: "BLUE z" is
		// no tag any more and goes to the member chosen by then.
		{name: "TLS 1.2", tls12: true, send: []string{"PING", "BLUE z"}, want: []string{"PONG 5 TLSv1.2", "dec(15)|A Response tls"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tcfg := &tls.Config{ServerName: "app.example", RootCAs: roots}
			if tc.tls12 {
				tcfg.MaxVersion = tls.VersionTLS12
			}
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.90.1.10:443", tcfg)
			if err != nil {
				t.Fatalf("TLS dial: %v", err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(c)
			for i, m := range tc.send {
				if _, err := io.WriteString(c, m+"\n"); err != nil {
					t.Fatal(err)
				}
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("line %d: read: %v", i, err)
				}
				if got := strings.TrimSpace(line); got != tc.want[i] {
					t.Fatalf("line %d: got %q, want %q", i, got, tc.want[i])
				}
			}
		})
	}
}

// TestTLSSSLCollectPlainSide: SSL::collect on a side that speaks
// plaintext (no server-ssl profile) is the rule's error, and the
// connection is reset rather than left waiting for an event that never
// comes.
func TestTLSSSLCollectPlainSide(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.90.2.11:9000", "P")
	p, _ := newPlane(t)
	rl := `
when SERVER_CONNECTED { SSL::collect }`
	cfg := basic("127.90.2.10:443", "127.90.2.11:9000")
	var log *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, log = compileRules(t, rl)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.90.2.10:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "x\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
		t.Fatalf("the flow went on: %q", line)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), "does not speak TLS") {
		if time.Now().After(deadline) {
			t.Fatalf("no rule error logged: %q", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTLSSSLSettings changes a client's TLS settings from its rule, as
// SSL::allow_nonssl, SSL::mode and SSL::maximum_record_size do on BIG-IP:
// one client address is let through in plaintext although the profile
// does not allow it (and reads SSL::mode 0 then), the others must speak
// TLS; a size out of maximum-record-size's bounds is refused, and one
// within caps every record the client receives, whether set before the
// handshake (a virtual whose flows would run on the event loop) or after.
func TestTLSSSLSettings(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.90.5.11:9000", "P")
	blob := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KB
	ln, err := net.Listen("tcp", "127.90.5.21:9000")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			c.Write(blob)
		}
	})
	p, _ := newPlane(t)
	cfg := basic("127.90.5.10:443", "127.90.5.11:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED {
    if { [IP::client_addr] eq "127.90.5.2" } { SSL::allow_nonssl 1 }
    set a [SSL::allow_nonssl]
    set range [catch { SSL::maximum_record_size 100 } e]
}
when SERVER_CONNECTED { set m [clientside { SSL::mode }]; TCP::collect }
when SERVER_DATA {
    TCP::payload replace 0 0 "allow=$a mode=$m range=$range|"
    TCP::release
}`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	dial := func(from string, useTLS bool) (net.Conn, error) {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		if useTLS {
			return tls.DialWithDialer(d, "tcp", "127.90.5.10:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
		}
		return d.Dial("tcp", "127.90.5.10:443")
	}
	for _, tc := range []struct {
		from   string
		useTLS bool
		want   string // "": the connection ends unanswered
	}{
		{"127.90.5.2", false, "allow=1 mode=0 range=1|P Response"},
		{"127.90.5.2", true, "allow=1 mode=1 range=1|P Response"},
		{"127.90.5.3", true, "allow=0 mode=1 range=1|P Response"},
		{"127.90.5.3", false, ""},
	} {
		c, err := dial(tc.from, tc.useTLS)
		if err != nil {
			t.Fatalf("%s tls=%v: %v", tc.from, tc.useTLS, err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "plaintext\n") // more than a TLS record's header
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if tc.want == "" {
			if err == nil {
				t.Fatalf("%s plaintext without allow-non-ssl was answered: %q", tc.from, line)
			}
			continue
		}
		if err != nil || strings.TrimSpace(line) != tc.want {
			t.Fatalf("%s tls=%v: %q %v, want %q", tc.from, tc.useTLS, line, err, tc.want)
		}
	}

	const overhead = 24 // TLS 1.2 GCM's nonce and tag; TLS 1.3's are less
	for _, tc := range []struct {
		name, rule string
		version    uint16
		max        int
	}{
		{"CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { SSL::maximum_record_size 700 }`, tls.VersionTLS13, 700},
		{"CLIENTSSL_HANDSHAKE", `when CLIENTSSL_HANDSHAKE { SSL::maximum_record_size 1200 }`, tls.VersionTLS12, 1200},
		{"read only", `when CLIENTSSL_HANDSHAKE { set x [SSL::maximum_record_size] }`, tls.VersionTLS13, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := basic("127.90.5.20:443", "127.90.5.21:9000")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			raw, err := net.DialTimeout("tcp", "127.90.5.20:443", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			raw.SetDeadline(time.Now().Add(10 * time.Second))
			rl := &recordLens{Conn: raw}
			c := tls.Client(rl, &tls.Config{ServerName: "app.example", RootCAs: roots, MinVersion: tc.version, MaxVersion: tc.version})
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			rl.lens = nil
			io.WriteString(c, "go\n")
			got := make([]byte, len(blob))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, blob) {
				t.Fatal("the member's 64 KB did not arrive whole")
			}
			largest := slices.Max(rl.lens)
			if tc.max == 0 {
				if largest < 16384 {
					t.Fatalf("no limit set: largest record %d bytes, want full-size records", largest)
				}
				return
			}
			if largest > tc.max+overhead {
				t.Fatalf("SSL::maximum_record_size %d: a record of %d bytes", tc.max, largest)
			}
		})
	}
}

// TestSSLForwardProxyPolicyRule: on an http virtual with the SSL forward
// proxy, CLIENTSSL_CLIENTHELLO runs over the client's hello with the
// bypass lists' decision, which SSL::forward_proxy policy reads and
// overrides: a name the lists would intercept is bypassed (the client
// sees the origin's own certificate and the origin's answer), one they
// would bypass is intercepted (the proxy CA's certificate, and the
// request reaches the rule in plaintext).
func TestSSLForwardProxyPolicyRule(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, memberRoots := testCert(t, "www.origin.test", "bank.origin.test")
	startBothServer(t, "127.90.7.11:443", mcert, mkey)
	rule := `
when CLIENTSSL_CLIENTHELLO {
    set before [SSL::forward_proxy policy]
    switch -- [SSL::sni name] {
        bank.origin.test { SSL::forward_proxy policy bypass }
        www.origin.test { SSL::forward_proxy policy intercept }
    }
    set after [SSL::forward_proxy policy]
}
when HTTP_REQUEST { HTTP::respond 200 content "rule saw $before/$after [HTTP::host]" }`
	cfg := l7Config(t, "127.90.7.10:443", false, mblb.HTTPOptions{}, rule, "127.90.7.11:443")
	cfg.Virtuals["/Common/vs"].TLS = forwardTLS(t, proxyCA, proxyKey, tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1},
		&sslfwd.Bypass{HostBypass: []string{"www.origin.test"}}, sslfwd.Config{})
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	for _, tc := range []struct {
		host   string
		roots  *x509.CertPool
		issuer string
		body   string
	}{
		{"bank.origin.test", memberRoots, "www.origin.test", "tls=true"},
		{"www.origin.test", proxyRoots, "Proxy CA", "rule saw bypass/intercept www.origin.test"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tc.roots, ServerName: tc.host},
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", "127.90.7.10:443")
				}}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + tc.host + "/p")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(string(b), tc.body) || resp.TLS.PeerCertificates[0].Issuer.CommonName != tc.issuer {
				t.Fatalf("answer %q, issuer %q; want %q from %q", b, resp.TLS.PeerCertificates[0].Issuer.CommonName, tc.body, tc.issuer)
			}
		})
	}
}
