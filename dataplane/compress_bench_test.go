package dataplane

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/mblb"
)

// BenchmarkHTTPCompress sends requests one after the other on one
// keep-alive connection through an HTTP virtual whose member answers with
// a 16 KiB HTML page, without and with an http-compression profile
// (gzip level 1, the built-in's). allocs/op is per request; the client
// reads the compressed answer by its Content-Length.
func BenchmarkHTTPCompress(b *testing.B) {
	var page strings.Builder
	for i := 0; page.Len() < 16<<10; i++ {
		page.WriteString("<tr><td>member " + strconv.Itoa(i) + "</td><td>127.0.0.1:8080</td><td>available</td></tr>\n")
	}
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + strconv.Itoa(page.Len()) + "\r\n\r\n" + page.String())
	benchHTTPMemberWith(b, "127.0.132.11:80", resp)
	for k, compress := range []bool{false, true} {
		name := "plain"
		if compress {
			name = "gzip"
		}
		vs := "127.0.132." + strconv.Itoa(k+1) + ":80"
		b.Run(name, func(b *testing.B) {
			opts := mblb.HTTPOptions{}
			if compress {
				pol, err := httpcompress.New(httpcompress.Config{Level: 1, MinSize: 1024, BufferSize: 4096, Vary: true, ContentTypeInclude: []string{"text/"}})
				if err != nil {
					b.Fatal(err)
				}
				opts.Compress = pol
			}
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: opts}}, "127.0.132.11:80")
			c := applyAndDial(b, cfg, vs)
			req := []byte("GET /members HTTP/1.1\r\nHost: www.example.com\r\nAccept-Encoding: gzip, deflate\r\n\r\n")
			buf := make([]byte, 64<<10)
			got := 0
			round := func() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				n, want := 0, -1
				for want < 0 || n < want {
					k, err := c.Read(buf[n:])
					if err != nil {
						b.Fatal(err)
					}
					n += k
					if want < 0 {
						if i := bytes.Index(buf[:n], []byte("\r\n\r\n")); i >= 0 {
							want = i + 4 + contentLength(buf[:i])
						}
					}
				}
				got = n
			}
			for range 10 {
				round() // the server connection opens, buffers grow
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				round()
			}
			b.ReportMetric(float64(got), "bytes/answer")
		})
	}
}

// contentLength is the Content-Length of a response head (-1: none),
// read without allocating so that allocs/op is the proxy's.
func contentLength(head []byte) int {
	for len(head) > 0 {
		l := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			l, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		const name = "content-length:"
		if len(l) > len(name) && bytes.EqualFold(l[:len(name)], []byte(name)) {
			n := 0
			for _, c := range bytes.TrimSpace(l[len(name):]) {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return -1
}
