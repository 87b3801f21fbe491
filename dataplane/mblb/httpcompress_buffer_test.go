package mblb

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
)

// buffered is c with BIG-IP's default buffer-size when the test left it
// out, as the daemon fills it in.
func buffered(c httpcompress.Config) httpcompress.Config {
	if c.BufferSize == 0 {
		c.BufferSize = 4096
	}
	return c
}

// hexText is n bytes of seeded random hex: text that compresses to about
// half, whatever the level, so that its compressed size is on a known
// side of a buffer-size.
func hexText(n int) string {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, (n+1)/2)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)[:n]
}

// startHexMember serves GET /cl/<n> and /chunked/<n>: hexText(n) as
// text/plain, with a Content-Length or chunked (with a trailer), and
// /nostore/.../<n> with a Content-Length and "Cache-Control: no-store"; each
// answer in one write, so that the proxy reads it whole rather than
// streaming it.
func startHexMember(t *testing.T, addr string) *httpMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &httpMember{label: "HEX", ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					m.reqs.Add(1)
					parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
					n, _ := strconv.Atoi(parts[len(parts)-1])
					body := hexText(n)
					var out string
					switch parts[0] {
					case "cl", "nostore":
						cc := ""
						if parts[0] == "nostore" {
							cc = "Cache-Control: no-store, max-age=0\r\n"
						}
						out = fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s", cc, n, body)
					default:
						out = fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n%x\r\n%s\r\n0\r\nX-Sum: ok\r\n\r\n", n, body)
					}
					if _, err := io.WriteString(c, out); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return m
}

// TestHTTPCompressBufferSize: a body that compresses within buffer-size
// leaves with its Content-Length; one that compresses to more goes
// chunked to an HTTP/1.1 client (the connection then carries the next
// request, a chunked member's trailer kept), and ended by the close for
// an HTTP/1.0 client or under response-chunking unchunk.
func TestHTTPCompressBufferSize(t *testing.T) {
	m := startHexMember(t, "127.63.12.11:0")
	for _, c := range []struct {
		name     string
		buffer   int
		chunking httpx.Chunking
		path     string // member answer
		minor    int
		want     string // length, chunked or close
	}{
		{"within the default", 4096, httpx.Sustain, "/cl/2000", 1, "length"},
		{"past the default", 4096, httpx.Sustain, "/cl/12000", 1, "chunked"},
		{"a larger buffer", 65536, httpx.Sustain, "/cl/12000", 1, "length"},
		{"zero", 0, httpx.Sustain, "/cl/2000", 1, "chunked"},
		{"chunked member, within", 4096, httpx.Sustain, "/chunked/2000", 1, "chunked"},
		{"chunked member, past", 4096, httpx.Sustain, "/chunked/12000", 1, "chunked"},
		{"http/1.0 past", 4096, httpx.Sustain, "/cl/12000", 0, "close"},
		{"http/1.0 within", 4096, httpx.Sustain, "/cl/2000", 0, "length"},
		{"unchunk past", 4096, httpx.Unchunk, "/cl/12000", 1, "close"},
		{"unchunk chunked member past", 4096, httpx.Unchunk, "/chunked/12000", 1, "close"},
		{"rechunk within", 4096, httpx.Rechunk, "/cl/2000", 1, "chunked"},
	} {
		pol, err := httpcompress.New(httpcompress.Config{Level: 6, BufferSize: c.buffer, AllowHTTP10: true})
		if err != nil {
			t.Fatal(err)
		}
		// (BufferSize 0 stays 0: buffered is for the other tests.)
		opts := HTTPOptions{Compress: pol, ResponseChunking: c.chunking}
		vs := startVS(t, "127.63.12.1:0", httpConfig(httpPool(m), false, opts))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(20 * time.Second))
		req := fmt.Sprintf("GET %s HTTP/1.%d\r\nHost: www\r\nAccept-Encoding: gzip\r\n\r\n", c.path, c.minor)
		io.WriteString(hc.c, req+get("/cl/100", "Accept-Encoding: gzip\r\n"))
		r, body := readDecoded(t, hc.br, "GET")
		n, _ := strconv.Atoi(c.path[strings.LastIndexByte(c.path, '/')+1:])
		if body != hexText(n) || r.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %q, body of %d bytes, want %d", c.name, r.Header.Get("Content-Encoding"), len(body), n)
		}
		chunked := len(r.TransferEncoding) > 0
		got := "close"
		switch {
		case chunked:
			got = "chunked"
		case r.ContentLength >= 0:
			got = "length"
		}
		if got != c.want {
			t.Errorf("%s: framed by %s (%v, %d), want %s", c.name, got, r.TransferEncoding, r.ContentLength, c.want)
			continue
		}
		if got == "length" && (r.ContentLength > int64(c.buffer) || r.ContentLength >= int64(n)) {
			t.Errorf("%s: Content-Length %d with buffer-size %d, %d bytes before", c.name, r.ContentLength, c.buffer, n)
		}
		if got == "chunked" && strings.HasPrefix(c.path, "/chunked/") && r.Trailer.Get("X-Sum") != "ok" {
			t.Errorf("%s: trailer %v", c.name, r.Trailer)
		}
		if got != "chunked" && r.Header.Get("Trailer") != "" {
			t.Errorf("%s: Trailer field %q on a body without chunks", c.name, r.Header.Get("Trailer"))
		}
		if got == "close" || c.minor == 0 {
			if _, err := hc.br.ReadByte(); err != io.EOF {
				t.Errorf("%s: connection not closed after the body: %v", c.name, err)
			}
			continue
		}
		if _, body := readDecoded(t, hc.br, "GET"); body != hexText(100) {
			t.Errorf("%s: the next answer %.40q", c.name, body)
		}
	}
}
