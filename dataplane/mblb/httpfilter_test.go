package mblb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/streamfilter"
)

// pageText is the page of n links the filter test's member serves.
func pageText(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<li><a href=\"http://example.com/%d\">item %d</a></li>\n", i, i)
	}
	return b.String()
}

// startPageMember serves GET /page/<cl|chunked|close>/<n>: pageText(n)
// with a Content-Length, chunked (in parts of 1000 bytes, each flushed),
// or ending at the close; /ae answers with the Accept-Encoding it got,
// /headers with the X- headers it got (and its own
// Strict-Transport-Security with ?sts=1),
// /encoded and /notransform with a page marked so that no proxy may
// compress it.
func startPageMember(t *testing.T, addr string) *httpMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &httpMember{label: "PAGE", ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.reqs.Add(1)
		switch r.URL.Path {
		case "/ae": // what the proxy passed on of Accept-Encoding
			fmt.Fprintf(w, "ae=%v", r.Header.Values("Accept-Encoding"))
			return
		case "/setcookie": // sets sid and answers with the Cookie fields it got
			w.Header().Add("Set-Cookie", "sid=xyz; Path=/; HttpOnly")
			w.Header().Add("Set-Cookie", "other=1")
			fmt.Fprintf(w, "cookie=%q", r.Header.Values("Cookie"))
			return
		case "/headers": // the request's X- and Via headers, as the member got them
			var xs []string
			for k, vs := range r.Header {
				if strings.HasPrefix(k, "X-") || k == "Via" {
					xs = append(xs, k+"="+strings.Join(vs, ","))
				}
			}
			sort.Strings(xs)
			if r.URL.Query().Get("sts") != "" {
				w.Header().Set("Strict-Transport-Security", "max-age=1")
			}
			io.WriteString(w, strings.Join(xs, " "))
			return
		case "/style.css": // a type the old browsers mishandle compressed
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, pageText(30))
			return
		case "/encoded", "/notransform": // answers a proxy must not encode
			w.Header().Set("Content-Type", "text/html")
			if r.URL.Path == "/encoded" {
				w.Header().Set("Content-Encoding", "br")
			} else {
				w.Header().Set("Cache-Control", "no-transform")
			}
			io.WriteString(w, pageText(30))
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/page/"), "/")
		if len(parts) != 2 {
			http.Error(w, "bad path", 400)
			return
		}
		n, _ := strconv.Atoi(parts[1])
		page := pageText(n)
		w.Header().Set("Content-Type", "text/html")
		switch parts[0] {
		case "cl":
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			io.WriteString(w, page)
		case "chunked":
			for len(page) > 0 {
				k := min(len(page), 1000)
				io.WriteString(w, page[:k])
				w.(http.Flusher).Flush()
				page = page[k:]
			}
		case "close":
			c, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			brw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" + page)
			brw.Flush()
			// End the body with a FIN, then read what the proxy had sent
			// on (a pipelined request) before closing: closing with it
			// unread would reset the connection, and a reset may take the
			// body's tail with it in the proxy's kernel.
			c.(*net.TCPConn).CloseWrite()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			io.Copy(io.Discard, c)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

// TestHTTPStreamFilter: a stream profile's expression rewrites response
// bodies of every framing and size, small ones sent with their new
// Content-Length and streamed ones re-chunked for HTTP/1.1 (the client
// connection then carries its next request) or ended by the close for
// HTTP/1.0 (which closes after its answer anyway); a HEAD's answer keeps
// its head.
func TestHTTPStreamFilter(t *testing.T) {
	m := startPageMember(t, "127.0.139.11:0")
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	opts := HTTPOptions{Stream: &StreamOptions{Profile: "/Common/links", Expr: expr}}
	for _, oc := range []bool{false, true} {
		vsAddr := "127.0.139.1:0"
		if oc {
			vsAddr = "127.0.139.2:0"
		}
		vs := startVS(t, vsAddr, httpConfig(httpPool(m), oc, opts))
		for _, n := range []int{3, 40000} { // 180 bytes; 2 MB, past MaxMessageSize
			for _, mode := range []string{"cl", "chunked", "close"} {
				for _, minor := range []int{1, 0} {
					name := fmt.Sprintf("oneconnect=%v %s %d HTTP/1.%d", oc, mode, n, minor)
					want := strings.ReplaceAll(pageText(n), "http://", "https://")
					c := dialHTTP(t, vs)
					c.c.SetDeadline(time.Now().Add(60 * time.Second))
					req := fmt.Sprintf("GET /page/%s/%d HTTP/1.%d\r\nHost: www\r\n\r\n", mode, n, minor)
					if _, err := io.WriteString(c.c, req+get("/page/cl/1")); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					r, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					body, err := io.ReadAll(r.Body)
					r.Body.Close()
					if err != nil || string(body) != want {
						t.Fatalf("%s: body of %d bytes (%v), want %d; starts %.80q", name, len(body), err, len(want), body)
					}
					streamed := n > 3 || mode == "chunked"
					switch {
					case !streamed && mode != "close" && r.ContentLength != int64(len(want)):
						t.Errorf("%s: Content-Length %d, want %d", name, r.ContentLength, len(want))
					case streamed && minor == 1 && mode != "close" && len(r.TransferEncoding) == 0 && r.ContentLength != int64(len(want)):
						t.Errorf("%s: neither chunked nor the new length: %v %d", name, r.TransferEncoding, r.ContentLength)
					}
					if minor == 0 || mode == "close" {
						if _, err := c.br.ReadByte(); err != io.EOF {
							t.Fatalf("%s: client connection not closed after a body the close ends: %v", name, err)
						}
						continue
					}
					// The pipelined request behind it is answered.
					r, err = http.ReadResponse(c.br, &http.Request{Method: "GET"})
					if err != nil {
						t.Fatalf("%s: the next request: %v", name, err)
					}
					body, _ = io.ReadAll(r.Body)
					r.Body.Close()
					if want := strings.ReplaceAll(pageText(1), "http://", "https://"); string(body) != want {
						t.Fatalf("%s: the next answer %q, want %q", name, body, want)
					}
				}
			}
		}
		// HEAD: nothing to filter, the member's head as it is.
		c := dialHTTP(t, vs)
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c.c, "HEAD /page/cl/3 HTTP/1.1\r\nHost: www\r\n\r\n")
		r, err := http.ReadResponse(c.br, &http.Request{Method: "HEAD"})
		if err != nil {
			t.Fatal(err)
		}
		if r.ContentLength != int64(len(pageText(3))) {
			t.Errorf("oneconnect=%v HEAD: Content-Length %d, want the member's %d", oc, r.ContentLength, len(pageText(3)))
		}
	}
}

// TestHTTPStreamFilterRequests: request bodies go through the filter
// too (one switch for both directions): a small one with its new
// Content-Length, a chunked one, and uploads past MaxMessageSize
// re-chunked to the member; the member sees the rewritten bytes.
func TestHTTPStreamFilterRequests(t *testing.T) {
	pool := uploadPool(startUploadMember(t, "127.0.139.21:0", false))
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	opts := HTTPOptions{Stream: &StreamOptions{Profile: "/Common/links", Expr: expr}}
	sumOf := func(b []byte) string {
		sum := sha256.Sum256(b)
		return fmt.Sprintf("n=%d sha=%s", len(b), hex.EncodeToString(sum[:]))
	}
	for _, oc := range []bool{false, true} {
		vsAddr := "127.0.139.3:0"
		if oc {
			vsAddr = "127.0.139.4:0"
		}
		vs := startVS(t, vsAddr, httpConfig(pool, oc, opts))
		for _, n := range []int{3, 60000} { // 180 bytes; 3 MB, an upload
			body := []byte(pageText(n))
			want := sumOf([]byte(strings.ReplaceAll(string(body), "http://", "https://")))
			for _, enc := range []string{"length", "chunked"} {
				name := fmt.Sprintf("oneconnect=%v %d %s", oc, n, enc)
				c, errc := sendUpload(t, vs, body, enc, 7000)
				t.Run(name, func(t *testing.T) { uploadAnswered(t, c.br, want, errc) })
				smallPostAnswered(t, c, name+": next request")
			}
		}
	}
}

// TestHTTPStreamChunkSize: with chunk-size, a body the stream filter
// changes goes to an HTTP/1.1 client in chunks of at most that many
// bytes, whether it streamed (2 MB) or was all in (chunked by its
// member); without it each part goes as one chunk. The client reads
// the chunk sizes off the wire, and the body is the rewritten page.
func TestHTTPStreamChunkSize(t *testing.T) {
	m := startPageMember(t, "127.15.5.11:0")
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		size    int
		n       int
		largest int // the largest chunk expected at most (0: more than 256)
	}{
		{256, 40000, 256},
		{64, 3, 64},
		{1000, 40000, 1000},
		{0, 40000, 0},
	} {
		opts := HTTPOptions{Stream: &StreamOptions{Profile: "/Common/links", Expr: expr, ChunkSize: c.size}}
		vs := startVS(t, fmt.Sprintf("127.15.5.%d:0", 1+i), httpConfig(httpPool(m), false, opts))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(hc.c, get(fmt.Sprintf("/page/chunked/%d", c.n)))
		r, err := http.ReadResponse(hc.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.TransferEncoding) == 0 {
			t.Fatalf("size %d: the answer is not chunked (%v)", c.size, r.Header)
		}
		// r.Body would de-chunk; read the chunks off the wire instead.
		var body []byte
		largest := 0
		for k := 0; ; k++ {
			if k > 1<<20 {
				t.Fatal("too many chunks")
			}
			line, err := hc.br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			sz, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
			if err != nil {
				t.Fatalf("chunk size line %q", line)
			}
			if sz == 0 {
				hc.br.ReadString('\n') // the blank line ending the trailers
				break
			}
			largest = max(largest, int(sz))
			chunk := make([]byte, sz+2)
			if _, err := io.ReadFull(hc.br, chunk); err != nil {
				t.Fatal(err)
			}
			body = append(body, chunk[:sz]...)
		}
		if want := strings.ReplaceAll(pageText(c.n), "http://", "https://"); string(body) != want {
			t.Errorf("size %d, %d lines: body of %d bytes, want %d", c.size, c.n, len(body), len(want))
		}
		if c.largest > 0 && largest > c.largest || c.largest == 0 && largest <= 256 {
			t.Errorf("size %d, %d lines: the largest chunk %d bytes", c.size, c.n, largest)
		}
	}
}
