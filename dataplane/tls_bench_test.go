package dataplane

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

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
			round := tlsKeepAliveClient(b, vs, roots)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round()
			}
		})
	}
}

// tlsKeepAliveClient dials vs over TLS (bench.example, trusted by roots)
// and returns one request and its answer ("ok", from benchHTTPMember) on
// that connection, after ten of them to warm up; the connection closes
// with the benchmark.
func tlsKeepAliveClient(b *testing.B, vs string, roots *x509.CertPool) (round func()) {
	b.Helper()
	c, err := tls.Dial("tcp", vs, &tls.Config{RootCAs: roots, ServerName: "bench.example"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	req := []byte("GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	buf := make([]byte, 4096)
	round = func() { exchangeOK(b, c, req, buf) }
	for i := 0; i < 10; i++ {
		round()
	}
	return round
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
		exchangeOK(b, c, req, buf)
		c.Close()
	}
}

// BenchmarkTLSLargeResponse fetches a 64 KiB response on a new TLS
// connection per request through a standard client-ssl virtual, with Go's
// dynamic record sizing (records of about one TCP segment for a
// connection's first 128 KB, one write(2) each) and without it (16 KB
// records): the record size's cost on the proxy.
func BenchmarkTLSLargeResponse(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 64<<10)
	resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n"), body...)
	serveConns(b, "127.0.134.11:80", func(c net.Conn) {
		buf := make([]byte, 4096)
		if _, err := c.Read(buf); err == nil {
			c.Write(resp)
		}
	})
	cert, key, roots := testCert(b, "bench.example")
	for i, dynamic := range []bool{true, false} {
		name := "dynamic-records"
		if !dynamic {
			name = "full-records"
		}
		b.Run(name, func(b *testing.B) {
			vs := "127.0.134." + string(rune('1'+i)) + ":443"
			cfg := basic(vs, "127.0.134.11:80")
			t := clientSSL(b, cert, key)
			t.Client = t.Client.Clone()
			t.Client.DynamicRecordSizingDisabled = !dynamic
			cfg.Virtuals["/Common/vs"].TLS = t
			p := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			b.Cleanup(p.Close)
			if err := p.Apply(nil, cfg); err != nil {
				b.Fatal(err)
			}
			tc := &tls.Config{RootCAs: roots, ServerName: "bench.example", ClientSessionCache: tls.NewLRUClientSessionCache(4)}
			req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			b.SetBytes(int64(len(resp)))
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				c, err := tls.Dial("tcp", vs, tc)
				if err != nil {
					b.Fatal(err)
				}
				c.Write(req)
				if n, err := io.Copy(io.Discard, c); n != int64(len(resp)) {
					b.Fatalf("read %d of %d bytes: %v", n, len(resp), err)
				}
				c.Close()
			}
			// CPU time is steadier than wall time on a shared machine; it
			// counts the client and the member too, the same in both.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the user and system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
