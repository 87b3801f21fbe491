package mblb

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// chunkPage is the body of n bytes the chunking tests' member serves
// and their clients send: lines with a link the stream filter rewrites.
func chunkPage(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d http://example.com/%d\n", i, i)
	}
	return b.String()[:n]
}

// startChunkMember serves GET /<cl|chunked|close>/<n>: chunkPage(n) with
// a Content-Length, chunked (parts of 1000 bytes, each flushed, and an
// X-Sum trailer), or ended by the close; and POST /echo: how the request
// body came (its transfer coding, Content-Length, X-T trailer, length
// and SHA-256).
func startChunkMember(t *testing.T, addr string) *httpMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &httpMember{label: "CHUNK", ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.reqs.Add(1)
		if r.URL.Path == "/echo" {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "te=%s cl=%d trailer=%s len=%d sum=%x", strings.Join(r.TransferEncoding, ","),
				r.ContentLength, r.Trailer.Get("X-T"), len(body), sha256.Sum256(body))
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) != 2 {
			http.Error(w, "bad path", 400)
			return
		}
		n, _ := strconv.Atoi(parts[1])
		page := chunkPage(n)
		w.Header().Set("Content-Type", "text/plain")
		switch parts[0] {
		case "cl":
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			io.WriteString(w, page)
		case "chunked":
			w.Header().Set("Trailer", "X-Sum")
			for len(page) > 0 {
				k := min(len(page), 1000)
				io.WriteString(w, page[:k])
				w.(http.Flusher).Flush()
				page = page[k:]
			}
			w.Header().Set("X-Sum", strconv.Itoa(n))
		case "close":
			c, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			brw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + page)
			brw.Flush()
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

// rawResponse is a response as it came on the wire (curl --raw -i):
// its framing fields and body data, de-chunked when chunked.
type rawResponse struct {
	minor         int
	chunked       bool
	contentLength int // -1: none
	close         bool
	trailerField  bool // the head announces trailers
	trailers      string
	data          string
}

func parseRaw(t *testing.T, name string, out []byte) rawResponse {
	t.Helper()
	i := bytes.Index(out, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatalf("%s: no head in %.200q", name, out)
	}
	head, body := out[:i+4], out[i+4:]
	h, err := httpx.ParseResponse(head)
	if err != nil {
		t.Fatalf("%s: %v in %q", name, err, head)
	}
	r := rawResponse{minor: h.Minor, chunked: h.Chunked, contentLength: int(h.ContentLength), close: h.Close,
		trailerField: httpx.HeaderValue(head, &h, "trailer") != nil}
	if h.Chunked {
		var f httpx.ResponseFramer
		n, ok, err := f.Frame(out)
		if err != nil || !ok || n != len(out) {
			t.Fatalf("%s: the chunked body does not frame (%d of %d, %v, %v): %.300q", name, n, len(out), ok, err, body)
		}
		data, err := httpx.Dechunk(nil, body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.data, r.trailers = string(data), string(httpx.ChunkTrailers(body))
		return r
	}
	r.data = string(body)
	return r
}

// TestHTTPChunkingResponses: each response-chunking mode on bodies the
// member sends with a Content-Length, chunked (with a trailer) and
// ended by the close, small (whole) and far past the message size
// (streamed), left alone and changed by a stream filter, to curl as it
// saw them on the wire (--raw); rechunk to an HTTP/1.0 client too.
func TestHTTPChunkingResponses(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is needed for this test")
	}
	m := startChunkMember(t, "127.74.0.11:0")
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	vsN := 0
	for _, mode := range []httpx.Chunking{httpx.Sustain, httpx.Unchunk, httpx.Rechunk} {
		for _, modified := range []bool{false, true} {
			opts := HTTPOptions{ResponseChunking: mode}
			if modified {
				opts.Stream = &StreamOptions{Profile: "/Common/links", Expr: expr}
			}
			cfg := httpConfig(httpPool(m), false, opts)
			cfg.MaxMessageSize = 4096
			vsN++
			vs := startVS(t, fmt.Sprintf("127.74.0.%d:0", vsN), cfg)
			for _, framing := range []string{"cl", "chunked", "close"} {
				for _, n := range []int{300, 2 << 20} { // whole; streamed
					for _, minor := range []int{1, 0} {
						if minor == 0 && mode != httpx.Rechunk {
							continue
						}
						name := fmt.Sprintf("%v modified=%v %s %d HTTP/1.%d", mode, modified, framing, n, minor)
						args := []string{"-s", "--raw", "-i", "--max-time", "20"}
						if minor == 0 {
							args = append(args, "--http1.0")
						}
						out, err := exec.Command(curl, append(args, fmt.Sprintf("http://%s/%s/%d", vs.addr(), framing, n))...).Output()
						if err != nil {
							t.Fatalf("%s: curl: %v", name, err)
						}
						r := parseRaw(t, name, out)
						want := chunkPage(n)
						if modified {
							want = strings.ReplaceAll(want, "http://", "https://")
						}
						if r.data != want {
							t.Fatalf("%s: %d bytes of data, want %d; starts %.80q", name, len(r.data), len(want), r.data)
						}
						streamed := n > 4096 || framing == "chunked"
						var wantChunked bool
						switch {
						case minor == 0:
						case mode == httpx.Rechunk:
							wantChunked = true
						case mode == httpx.Unchunk:
						case framing == "chunked":
							wantChunked = true
						case modified && streamed && framing == "cl":
							wantChunked = true
						}
						if r.chunked != wantChunked {
							t.Errorf("%s: chunked=%v, want %v (Content-Length %d)", name, r.chunked, wantChunked, r.contentLength)
						}
						switch {
						case r.chunked && r.contentLength >= 0:
							t.Errorf("%s: chunked with a Content-Length", name)
						case !r.chunked && r.contentLength < 0 && !r.close && framing != "close" && minor == 1:
							t.Errorf("%s: neither chunked, nor a length, nor Connection: close", name)
						case !r.chunked && r.contentLength >= 0 && r.contentLength != len(want):
							t.Errorf("%s: Content-Length %d for %d bytes", name, r.contentLength, len(want))
						}
						// Trailers survive wherever the body stays chunked.
						wantTrailer := r.chunked && framing == "chunked"
						if got := strings.Contains(r.trailers, "X-Sum: "+strconv.Itoa(n)); got != wantTrailer {
							t.Errorf("%s: trailers %q", name, r.trailers)
						}
						if r.trailerField && !r.chunked && minor == 1 { // (the member does not chunk for HTTP/1.0)
							t.Errorf("%s: Trailer announced for a body sent without chunks", name)
						}
					}
				}
			}
		}
	}
}

// TestHTTPChunkingRequests: each request-chunking mode on request bodies
// sent with a Content-Length and chunked (with an X-T trailer), whole
// and past the message size (streamed), left alone and changed by a
// stream filter, as the member got them; each request in one write.
func TestHTTPChunkingRequests(t *testing.T) {
	m := startChunkMember(t, "127.74.0.21:0")
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	vsN := 0
	for _, mode := range []httpx.Chunking{httpx.Sustain, httpx.Unchunk, httpx.Rechunk} {
		for _, modified := range []bool{false, true} {
			opts := HTTPOptions{RequestChunking: mode}
			if modified {
				opts.Stream = &StreamOptions{Profile: "/Common/links", Expr: expr}
			}
			cfg := httpConfig(httpPool(m), false, opts)
			cfg.MaxMessageSize = 4096
			vsN++
			vs := startVS(t, fmt.Sprintf("127.74.1.%d:0", vsN), cfg)
			for _, framing := range []string{"cl", "chunked"} {
				for _, n := range []int{300, 20000} {
					name := fmt.Sprintf("%v modified=%v %s %d", mode, modified, framing, n)
					body := chunkPage(n)
					var req string
					if framing == "cl" {
						req = fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", n, body)
					} else {
						req = "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
							string(httpx.AppendChunked(nil, []byte(body), []byte("X-T: 7\r\n\r\n")))
					}
					c := dialHTTP(t, vs)
					c.c.SetDeadline(time.Now().Add(20 * time.Second))
					rs, got, err := c.do("POST", req)
					if err != nil || rs[0].StatusCode != 200 {
						t.Fatalf("%s: %v %v", name, err, got)
					}
					c.c.Close()
					want := body
					if modified {
						want = strings.ReplaceAll(want, "http://", "https://")
					}
					streamed := n > 4096
					var wantChunked bool
					switch {
					case mode == httpx.Rechunk:
						wantChunked = true
					case mode == httpx.Unchunk:
						// A streamed upload cannot be ended by the close: it
						// stays chunked, or is chunked once changed.
						wantChunked = streamed && (framing == "chunked" || modified)
					case framing == "chunked":
						wantChunked = true
					case modified && streamed:
						wantChunked = true
					}
					wantEcho := fmt.Sprintf("te= cl=%d", len(want))
					if wantChunked {
						wantEcho = "te=chunked cl=-1"
					}
					wantTrailer := ""
					if wantChunked && framing == "chunked" {
						wantTrailer = "7"
					}
					wantEcho += fmt.Sprintf(" trailer=%s len=%d sum=%x", wantTrailer, len(want), sha256.Sum256([]byte(want)))
					if got[0] != wantEcho {
						t.Errorf("%s: the member got %q, want %q", name, got[0], wantEcho)
					}
				}
			}
		}
	}
}

// TestHTTPChunkingDefaultUnchanged: under the default modes an unchanged
// chunked response is passed byte for byte, chunk sizes included.
func TestHTTPChunkingDefaultUnchanged(t *testing.T) {
	m := startChunkMember(t, "127.74.0.31:0")
	vs := startVS(t, "127.74.2.1:0", httpConfig(httpPool(m), false, HTTPOptions{}))
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c.c, get("/chunked/2500"))
	br := bufio.NewReader(c.c)
	var got bytes.Buffer
	for !bytes.HasSuffix(got.Bytes(), []byte("X-Sum: 2500\r\n\r\n")) {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatalf("%v after %q", err, got.Bytes())
		}
		got.WriteByte(b)
	}
	if !bytes.Contains(got.Bytes(), []byte("\r\n3e8\r\n")) || !bytes.Contains(got.Bytes(), []byte("\r\n1f4\r\n")) {
		t.Errorf("the member's chunks (1000, 1000, 500 bytes) were not passed as they came: %.300q", got.Bytes())
	}
}
