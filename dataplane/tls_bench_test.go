package dataplane

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// BenchmarkTLSKeepAlive sends requests one after the other on one
// keep-alive TLS client connection through a client-ssl virtual: an HTTP
// virtual (with and without OneConnect) and a standard one. allocs/op is
// per request and includes the client's TLS.
func BenchmarkTLSKeepAlive(b *testing.B) {
	benchHTTPMember(b, "127.0.132.11:80")
	cert, key, roots := testCert(b, "bench.example")
	for i, kind := range []string{"http", "http-oneconnect", "standard"} {
		vs := "127.0.132." + string(rune('1'+i)) + ":443"
		b.Run(kind, func(b *testing.B) {
			var cfg *Config
			if kind == "standard" {
				cfg = basic(vs, "127.0.132.11:80")
			} else {
				cfg = mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.132.11:80")
				if kind == "http-oneconnect" {
					cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
				}
			}
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(b, cert, key)
			p := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			b.Cleanup(p.Close)
			if err := p.Apply(nil, cfg); err != nil {
				b.Fatal(err)
			}
			c, err := tls.Dial("tcp", vs, &tls.Config{RootCAs: roots, ServerName: "bench.example"})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := []byte("GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
			buf := make([]byte, 4096)
			round := func() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				n := 0
				for !bytes.HasSuffix(buf[:n], []byte("\r\n\r\nok")) {
					k, err := c.Read(buf[n:])
					if err != nil {
						b.Fatal(err)
					}
					n += k
				}
			}
			for i := 0; i < 10; i++ {
				round()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round()
			}
		})
	}
}

// BenchmarkTLSHandshake opens a new TLS connection per request through a
// standard client-ssl virtual (ECDSA P-256, TLS 1.3, no resumption): the
// handshake's cost on both ends, as new handshakes per second.
func BenchmarkTLSHandshake(b *testing.B) {
	benchHTTPMember(b, "127.0.133.11:80")
	cert, key, roots := testCert(b, "bench.example")
	cfg := basic("127.0.133.1:443", "127.0.133.11:80")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(b, cert, key)
	p := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	b.Cleanup(p.Close)
	if err := p.Apply(nil, cfg); err != nil {
		b.Fatal(err)
	}
	tc := &tls.Config{RootCAs: roots, ServerName: "bench.example"}
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := tls.Dial("tcp", "127.0.133.1:443", tc)
		if err != nil {
			b.Fatal(err)
		}
		c.Write(req)
		n := 0
		for !bytes.HasSuffix(buf[:n], []byte("\r\n\r\nok")) {
			k, err := c.Read(buf[n:])
			if err != nil {
				b.Fatal(err)
			}
			n += k
		}
		c.Close()
	}
}
