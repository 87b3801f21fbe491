package dataplane

import (
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// pubSink keeps the lines a log publisher was given.
type pubSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *pubSink) send(pub string, line []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, pub+" "+string(line))
	return true
}

func (s *pubSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// TestTLSHandshakeFailureLog: a client-ssl or server-ssl profile's
// log-publisher is told of each failed handshake, the client's (client
// -> virtual) or the member's (system -> member), in BIG-IP's two lines;
// a handshake that succeeds logs nothing.
func TestTLSHandshakeFailureLog(t *testing.T) {
	cert, key, roots := testCert(t, "log.example")
	startServer(t, "127.55.2.11:9000", "PLAIN")
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name   string
		client *tls.Config // nil: a plaintext client (server-ssl case)
		server bool        // server-ssl toward a plaintext member
		want   []string
	}{
		{name: "good client", client: &tls.Config{ServerName: "log.example", RootCAs: roots}},
		{name: "untrusting client", client: &tls.Config{ServerName: "log.example"},
			want: []string{"/Common/pub <132>01260013:4: SSL Handshake failed for TCP 127.55.2.1:", " -> 127.55.2.10:443",
				"<132>01260009:4: 127.55.2.1:", "Connection error: remote error: tls: bad certificate"}},
		{name: "no shared cipher", client: &tls.Config{ServerName: "log.example", RootCAs: roots, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_CBC_SHA}}, // an RSA suite; the certificate is ECDSA
			want: []string{"01260013:4: SSL Handshake failed for TCP 127.55.2.1:", "Connection error: tls: no cipher suite supported by both client and server"}},
		{name: "plaintext member", server: true,
			want: []string{"/Common/spub <132>01260013:4: SSL Handshake failed for TCP 127.55.2.10:", " -> 127.55.2.11:9000", "01260009:4: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &pubSink{}
			cfg := basic("127.55.2.10:443", "127.55.2.11:9000")
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
			if tc.server {
				b := serverSSL(t)
				b.Log = &tlsprof.FailureLog{Publisher: "/Common/spub", Send: sink.send}
				cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: b}
			} else {
				ct := clientSSL(t, cert, key)
				ct.ClientBuilt[0].Log = &tlsprof.FailureLog{Publisher: "/Common/pub", Send: sink.send}
				cfg.Virtuals["/Common/vs"].TLS = ct
			}
			mustApply(t, p, cfg)
			d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.55.2.1")}}
			if tc.client != nil {
				c, err := tls.DialWithDialer(d, "tcp", "127.55.2.10:443", tc.client)
				if err == nil {
					c.Close()
				}
			} else {
				c, err := d.Dial("tcp", "127.55.2.10:443")
				if err != nil {
					t.Fatal(err)
				}
				c.Write([]byte("hello\n"))
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				c.Read(make([]byte, 64))
				c.Close()
			}
			if len(tc.want) == 0 {
				time.Sleep(50 * time.Millisecond) // a failure would have been told by now
				if s := sink.text(); s != "" {
					t.Fatalf("a good handshake was logged:\n%s", s)
				}
				return
			}
			eventually(t, "the failure's lines", func() bool { return strings.Count(sink.text(), "\n") >= 1 })
			s := sink.text()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Fatalf("missing %q in:\n%s", w, s)
				}
			}
		})
	}
}
