package dataplane

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startBodyMember answers GET /<n> with n bytes of a repeating pattern
// and a Content-Length, and GET /chunked/<n> with the same chunked.
func startBodyMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		p := strings.TrimPrefix(r.URL.Path, "/")
		chunked := strings.HasPrefix(p, "chunked/")
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "chunked/"))
		if !chunked {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Write(bodyPattern(n))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func bodyPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) ^ byte(i>>12)
	}
	return b
}

// TestHTTPLargeResponsesThroughRules: a 3 MB download (over the engine's
// 1 MiB message limit) passes through an HTTP virtual whose rule edits
// the response head, and the connection serves the next request; a rule
// that collects such a body gets its start, and what it puts in place of
// it (here: one byte inserted before it) goes out before the rest.
func TestHTTPLargeResponsesThroughRules(t *testing.T) {
	startBodyMember(t, "127.0.139.11:80")
	const size = 3 << 20
	want := bodyPattern(size)
	edit := `when HTTP_RESPONSE { HTTP::header insert X-Seen yes }`
	collect := `when HTTP_RESPONSE { HTTP::collect }
when HTTP_RESPONSE_DATA { HTTP::payload replace 0 0 "x" }`
	for _, tc := range []struct {
		name, vs string
		oc       bool
	}{{"per-connection", "127.0.139.1:80", false}, {"oneconnect", "127.0.139.2:80", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, lg := newPlane(t)
			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, edit, "127.0.139.11:80"))
			c := dialHTTPVS(t, tc.vs)
			for _, path := range []string{"/" + strconv.Itoa(size), "/chunked/" + strconv.Itoa(size)} {
				c.c.SetDeadline(time.Now().Add(30 * time.Second))
				io.WriteString(c.c, httpReq("h", path))
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatalf("%s: %v (log %s)", path, err, lg)
				}
				body, err := io.ReadAll(r.Body)
				if err != nil || !bytes.Equal(body, want) {
					t.Fatalf("%s: %d bytes (%v), want the member's %d", path, len(body), err, size)
				}
				if r.Header.Get("X-Seen") != "yes" {
					t.Fatalf("%s: the rule's header is missing: %v", path, r.Header)
				}
			}
			if _, body, err := c.do(httpReq("h", "/5")); err != nil || body != string(want[:5]) {
				t.Fatalf("after the large responses: %q %v", body, err)
			}

			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, collect, "127.0.139.11:80"))
			c = dialHTTPVS(t, tc.vs)
			if _, body, err := c.do(httpReq("h", "/5")); err != nil || body != "x"+string(want[:5]) {
				t.Fatalf("collect of a small body: %q %v", body, err)
			}
			for _, path := range []string{"/" + strconv.Itoa(size), "/chunked/" + strconv.Itoa(size)} {
				c.c.SetDeadline(time.Now().Add(30 * time.Second))
				io.WriteString(c.c, httpReq("h", path))
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatalf("%s: %v (log %s)", path, err, lg)
				}
				body, err := io.ReadAll(r.Body)
				if err != nil || !bytes.Equal(body, append([]byte("x"), want...)) {
					t.Fatalf("collect and replace of a streamed body %s: %d bytes (%v), want x and the member's %d", path, len(body), err, size)
				}
			}
			if _, body, err := c.do(httpReq("h", "/5")); err != nil || body != "x"+string(want[:5]) {
				t.Fatalf("after the replaced large responses: %q %v", body, err)
			}
		})
	}
}
