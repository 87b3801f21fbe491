package dataplane

import (
	"crypto/tls"
	"io"
	"log/slog"
	"testing"
)

// BenchmarkTLSHandshakeRules is BenchmarkTLSHandshake on a virtual whose
// rule handles a TLS event: CLIENTSSL_HANDSHAKE alone (the handshake's
// allocations are those of a virtual whose rules use none of the
// handshake's middle events), or CLIENTSSL_SERVERHELLO_SEND too (what
// watching the ServerHello costs).
func BenchmarkTLSHandshakeRules(b *testing.B) {
	benchHTTPMember(b, "127.129.5.11:80")
	cert, key, roots := testCert(b, "bench.example")
	for i, bc := range []struct{ name, rule string }{
		{"handshake", `when CLIENTSSL_HANDSHAKE { set v [SSL::cipher version] }`},
		{"serverhello", `when CLIENTSSL_HANDSHAKE { set v [SSL::cipher version] }
when CLIENTSSL_SERVERHELLO_SEND { set c [SSL::cipher name] }`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			addr := []string{"127.129.5.1:443", "127.129.5.2:443"}[i]
			cfg := basic(addr, "127.129.5.11:80")
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(b, cert, key)
			rs, _ := compileRules(b, bc.rule)
			cfg.Virtuals["/Common/vs"].Rules = rs
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
			for range b.N {
				c, err := tls.Dial("tcp", addr, tc)
				if err != nil {
					b.Fatal(err)
				}
				exchangeOK(b, c, req, buf)
				c.Close()
			}
		})
	}
}
