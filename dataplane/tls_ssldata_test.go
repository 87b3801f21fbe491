package dataplane

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
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
