package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startPartsMember answers each request with "n=<body bytes>" once its
// body ends, and sends on parts the request's path, then each part of
// the body as it reads it, before reading on.
func startPartsMember(t *testing.T, addr string) <-chan string {
	t.Helper()
	parts := make(chan string, 64)
	serveConns(t, addr, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			parts <- r.URL.Path
			buf := make([]byte, 4096)
			n := 0
			for {
				k, err := r.Body.Read(buf)
				if k > 0 {
					n += k
					parts <- string(buf[:k])
				}
				if err != nil {
					break
				}
			}
			out := fmt.Sprintf("n=%d", n)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(out), out)
		}
	})
	return parts
}

// TestHTTPSlowChunkedUploadRule: a chunked POST whose client sends 4
// bytes, then 8 more, then waits, through a virtual whose iRule runs
// `HTTP::collect 10`: HTTP_REQUEST runs with the head alone,
// HTTP_REQUEST_DATA once 10 bytes are in (never over the first 4) with
// those 10 as its payload, and
// the member reads the head and the 12 bytes before the client ends the
// body; the answer then counts all of it.
func TestHTTPSlowChunkedUploadRule(t *testing.T) {
	parts := startPartsMember(t, "127.43.7.11:80")
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := l7Config(t, "127.43.7.1:80", oc, mblb.HTTPOptions{}, "", "127.43.7.11:80")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when HTTP_REQUEST {
    log local0. "request [HTTP::header Transfer-Encoding]"
    HTTP::collect 10
}
when HTTP_REQUEST_DATA {
    log local0. "data [HTTP::payload length]"
}`)
			mustApply(t, p, cfg)
			c := dialHTTPVS(t, "127.43.7.1:80")
			c.c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c.c, "POST /slow HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n")
			eventually(t, "HTTP_REQUEST", func() bool { return len(lg.Lines()) > 0 })
			io.WriteString(c.c, "8\r\nefghijkl\r\n")
			eventually(t, "HTTP_REQUEST_DATA", func() bool { return len(lg.Lines()) > 1 })
			lines := lg.Lines()
			if !strings.HasSuffix(lines[0], "request chunked") {
				t.Fatalf("HTTP_REQUEST log %q", lines[0])
			}
			if !strings.HasSuffix(lines[1], "data 10") {
				t.Fatalf("HTTP_REQUEST_DATA log %q, want the 10 bytes collected", lines[1])
			}
			got := ""
			for want := "/slowabcdefghijkl"; len(got) < len(want); {
				select {
				case s := <-parts:
					got += s
				case <-time.After(10 * time.Second):
					t.Fatalf("member read %q, want the head and 12 bytes before the body ends", got)
				}
			}
			if got != "/slowabcdefghijkl" {
				t.Fatalf("member read %q", got)
			}
			io.WriteString(c.c, "3\r\nmno\r\n0\r\n\r\n")
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			if string(b) != "n=15" {
				t.Fatalf("answer %q, want n=15", b)
			}
			for len(parts) > 0 {
				<-parts
			}
		})
	}
}
