package dataplane

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// benchHTTPMember answers every request ("GET ... \r\n\r\n", no body) with
// a fixed response, allocating nothing per request, so that -benchmem
// counts the proxy's allocations (and the client's, none).
func benchHTTPMember(b *testing.B, addr string) {
	benchHTTPMemberWith(b, addr, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
}

// benchHTTPMemberWith is benchHTTPMember answering with resp.
func benchHTTPMemberWith(b *testing.B, addr string, resp []byte) {
	serveConns(b, addr, func(c net.Conn) {
		buf := make([]byte, 16<<10)
		n := 0
		for {
			k, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += k
			for {
				i := bytes.Index(buf[:n], []byte("\r\n\r\n"))
				if i < 0 {
					break
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
				n = copy(buf, buf[i+4:n])
			}
		}
	})
}

// applyAndDial runs cfg on a new plane, closed when the benchmark ends,
// and is a client connection to vs (closed then too).
func applyAndDial(b *testing.B, cfg *Config, vs string) net.Conn {
	p := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	b.Cleanup(p.Close)
	if err := p.Apply(nil, cfg); err != nil {
		b.Fatal(err)
	}
	c, err := net.Dial("tcp", vs)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// exchangeOK writes req on c and reads, into buf, until the end of
// benchHTTPMember's answer.
func exchangeOK(b *testing.B, c net.Conn, req, buf []byte) {
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

// BenchmarkHTTPRequestRule sends requests one after the other on one
// keep-alive client connection through an HTTP virtual, without a rule
// and with the 10-line host/URI routing rule (switch and HTTP::header
// replace), with and without OneConnect. allocs/op is per request and
// includes the rule's.
func BenchmarkHTTPRequestRule(b *testing.B) {
	const rule = `when HTTP_REQUEST {
    switch -glob [string tolower [HTTP::host]] {
        "api.*" { pool api_pool }
        default {
            switch -glob [HTTP::path] {
                "/static/*" { pool static_pool }
                default { pool pool }
            }
        }
    }
    HTTP::header replace X-Tag [HTTP::path]
}`
	benchHTTPMember(b, "127.0.131.11:80")
	benchHTTPMember(b, "127.0.131.12:80")
	benchHTTPMember(b, "127.0.131.13:80")
	n := 0
	for _, oc := range []bool{false, true} {
		for _, withRule := range []bool{false, true} {
			name := "per-connection"
			if oc {
				name = "oneconnect"
			}
			if withRule {
				name += "/rule"
			} else {
				name += "/none"
			}
			n++
			vs := "127.0.131." + string(rune('0'+n)) + ":80"
			b.Run(name, func(b *testing.B) {
				cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.131.11:80")
				if oc {
					cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
				}
				withPool(cfg, "/Common/api_pool", "127.0.131.12:80")
				withPool(cfg, "/Common/static_pool", "127.0.131.13:80")
				if withRule {
					cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(b, rule)
				}
				c := applyAndDial(b, cfg, vs)
				reqs := [][]byte{
					[]byte("GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"),
					[]byte("GET /v1/users HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"),
					[]byte("GET /static/a.css HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"),
				}
				buf := make([]byte, 4096)
				round := func(i int) { exchangeOK(b, c, reqs[i%len(reqs)], buf) }
				for i := 0; i < 10; i++ {
					round(i) // server connections open, buffers grown
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					round(i)
				}
			})
		}
	}
}
