package tlsprof

import (
	"crypto/tls"
	"net"
	"testing"
)

// BenchmarkHandshake measures full TLS handshakes through a client-ssl
// profile's configuration (no resumption), per key type and version, over
// an in-memory pipe. Both ends run in the benchmark, so one op is the
// server's and the client's work together; the proxy pays the server's part
// for each new client.
func BenchmarkHandshake(b *testing.B) {
	p := newPKI(b)
	for _, kind := range []string{"ecdsa", "rsa"} {
		ck := p.chain(b, "bench-"+kind, kind, "bench.example")
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			b.Run(kind+"/"+VersionName(ver), func(b *testing.B) {
				prof, err := (&ClientSSL{Name: "/Common/bench", CertKeyChain: []CertKeyChain{ck}}).Build()
				if err != nil {
					b.Fatal(err)
				}
				ccfg := &tls.Config{InsecureSkipVerify: true, MinVersion: ver, MaxVersion: ver}
				b.ReportAllocs()
				for b.Loop() {
					c1, c2 := net.Pipe()
					srv := tls.Server(c1, prof.Config)
					done := make(chan error, 1)
					go func() { done <- srv.Handshake() }()
					cli := tls.Client(c2, ccfg)
					if err := cli.Handshake(); err != nil {
						b.Fatal(err)
					}
					if err := <-done; err != nil {
						b.Fatal(err)
					}
					c1.Close()
					c2.Close()
				}
			})
		}
	}
}
