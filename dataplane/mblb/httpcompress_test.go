package mblb

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/streamfilter"
	"github.com/openltm/openltm/hoststat"
)

// readDecoded reads one response from br and its body decoded as its
// Content-Encoding says (gzip and deflate, with the standard library's
// readers, a client's; another coding's bytes as they are).
func readDecoded(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	r, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body io.Reader = r.Body
	switch ce := r.Header.Get("Content-Encoding"); ce {
	case "gzip":
		if body, err = gzip.NewReader(r.Body); err != nil {
			t.Fatal(err)
		}
	case "deflate":
		if body, err = zlib.NewReader(r.Body); err != nil {
			t.Fatal(err)
		}
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return r, string(b)
}

// TestHTTPCompress: an http-compression profile compresses answers of
// every framing and size for the clients that accept it, in the coding
// they prefer (gzip on a tie, or deflate when the profile prefers it): a
// whole body with its new Content-Length, a streamed one re-chunked for
// HTTP/1.1 (the connection then carries its next request) or ended by the
// close; never for a client that accepts neither, and for HTTP/1.0 only
// with allow-http-10. With a stream profile too, the filter runs first.
func TestHTTPCompress(t *testing.T) {
	m := startPageMember(t, "127.0.141.11:0")
	expr, err := streamfilter.Parse("@http://@https://@")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		cfg     httpcompress.Config
		stream  bool
		oc      bool
		accept  string
		minor   int
		want    string // the coding expected
		rewrite bool
	}{
		{"gzip", httpcompress.Config{Level: 1}, false, false, "gzip, deflate", 1, "gzip", false},
		{"deflate preferred", httpcompress.Config{Level: 6, Prefer: httpcompress.Deflate}, false, false, "gzip, deflate", 1, "deflate", false},
		{"deflate by weight", httpcompress.Config{Level: 9}, false, true, "gzip;q=0.5, deflate", 1, "deflate", false},
		{"not accepted", httpcompress.Config{Level: 1}, false, false, "br", 1, "", false},
		{"no field", httpcompress.Config{Level: 1}, false, false, "", 1, "", false},
		{"http/1.0 refused", httpcompress.Config{Level: 1}, false, false, "gzip", 0, "", false},
		{"http/1.0 allowed", httpcompress.Config{Level: 1, AllowHTTP10: true}, false, false, "gzip", 0, "gzip", false},
		{"with a stream filter", httpcompress.Config{Level: 1}, true, true, "gzip", 1, "gzip", true},
	} {
		c.cfg.Vary = c.name != "deflate by weight" // (one without)
		pol, err := httpcompress.New(buffered(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		opts := HTTPOptions{Compress: pol}
		if c.stream {
			opts.Stream = &StreamOptions{Profile: "/Common/links", Expr: expr}
		}
		vs := startVS(t, "127.0.141.1:0", httpConfig(httpPool(m), c.oc, opts))
		for _, n := range []int{30, 40000} { // 1.8 KB; 2 MB, past MaxMessageSize
			for _, mode := range []string{"cl", "chunked", "close"} {
				name := fmt.Sprintf("%s: %s %d", c.name, mode, n)
				want := pageText(n)
				if c.rewrite {
					want = strings.ReplaceAll(want, "http://", "https://")
				}
				hc := dialHTTP(t, vs)
				hc.c.SetDeadline(time.Now().Add(60 * time.Second))
				ae := ""
				if c.accept != "" {
					ae = "Accept-Encoding: " + c.accept + "\r\n"
				}
				req := fmt.Sprintf("GET /page/%s/%d HTTP/1.%d\r\nHost: www\r\n%s\r\n", mode, n, c.minor, ae)
				if _, err := io.WriteString(hc.c, req+get("/page/cl/30", "Accept-Encoding: gzip\r\n")); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				r, body := readDecoded(t, hc.br, "GET")
				if body != want {
					t.Fatalf("%s: body of %d bytes, want %d; starts %.80q", name, len(body), len(want), body)
				}
				if got := r.Header.Get("Content-Encoding"); got != c.want {
					t.Fatalf("%s: Content-Encoding %q, want %q", name, got, c.want)
				}
				if c.want == "" {
					if v := r.Header.Get("Vary"); v != "" {
						t.Errorf("%s: Vary %q on an answer sent as it came", name, v)
					}
					if c.minor == 0 || mode == "close" {
						continue
					}
				} else {
					if v := r.Header.Get("Vary"); (v == "Accept-Encoding") != c.cfg.Vary {
						t.Errorf("%s: Vary %q with vary-header %v", name, v, c.cfg.Vary)
					}
					// A small page with a Content-Length is compressed
					// whole and goes with its new length; a chunked one
					// may be whole or streamed (re-chunked); one the close
					// ends streams and ends with the close.
					chunked := len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"
					switch {
					case mode == "cl" && n == 30 && (r.ContentLength <= 0 || r.ContentLength >= int64(len(want))):
						t.Errorf("%s: Content-Length %d for %d bytes compressed whole", name, r.ContentLength, len(want))
					case mode != "close" && c.minor == 1 && !chunked && r.ContentLength <= 0:
						t.Errorf("%s: neither chunked nor a length: %v %d", name, r.TransferEncoding, r.ContentLength)
					}
				}
				if c.minor == 0 || mode == "close" {
					if _, err := hc.br.ReadByte(); err != io.EOF {
						t.Fatalf("%s: client connection not closed after a body the close ends: %v", name, err)
					}
					continue
				}
				// The pipelined request behind it is answered.
				r, body = readDecoded(t, hc.br, "GET")
				wantNext := pageText(30)
				if c.rewrite {
					wantNext = strings.ReplaceAll(wantNext, "http://", "https://")
				}
				if body != wantNext || r.StatusCode != 200 {
					t.Fatalf("%s: the next answer %d %.60q", name, r.StatusCode, body)
				}
			}
		}
		// HEAD: no body, the member's head as it is.
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(hc.c, "HEAD /page/cl/30 HTTP/1.1\r\nHost: www\r\nAccept-Encoding: gzip\r\n\r\n")
		r, _ := readDecoded(t, hc.br, "HEAD")
		if r.ContentLength != int64(len(pageText(30))) || r.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: HEAD: Content-Length %d, Content-Encoding %q", c.name, r.ContentLength, r.Header.Get("Content-Encoding"))
		}
	}
}

// TestHTTPCompressChoices: the profile's lists, min-size and what the
// member's own head says decide which answers are compressed, and the
// request's Accept-Encoding reaches the member only when the proxy will
// not compress (or keep-accept-encoding).
func TestHTTPCompressChoices(t *testing.T) {
	m := startPageMember(t, "127.0.141.21:0")
	for _, c := range []struct {
		name string
		cfg  httpcompress.Config
		path string
		want bool   // compressed
		ae   string // what the member saw of Accept-Encoding (path /ae)
	}{
		{"min-size passes", httpcompress.Config{Level: 1, MinSize: 1024}, "/page/cl/30", true, ""},
		{"below min-size", httpcompress.Config{Level: 1, MinSize: 4096}, "/page/cl/30", false, ""},
		{"unknown length passes min-size", httpcompress.Config{Level: 1, MinSize: 1 << 20}, "/page/chunked/30", true, ""},
		{"type listed", httpcompress.Config{Level: 1, ContentTypeInclude: []string{"text/"}}, "/page/cl/30", true, ""},
		{"type not listed", httpcompress.Config{Level: 1, ContentTypeInclude: []string{"application/json"}}, "/page/cl/30", false, ""},
		{"type excluded", httpcompress.Config{Level: 1, ContentTypeExclude: []string{"html"}}, "/page/cl/30", false, ""},
		{"uri excluded", httpcompress.Config{Level: 1, URIExclude: []string{"^/page/"}}, "/page/cl/30", false, ""},
		{"already encoded", httpcompress.Config{Level: 1}, "/encoded", false, ""},
		{"no-transform", httpcompress.Config{Level: 1}, "/notransform", false, ""},
		{"Accept-Encoding removed", httpcompress.Config{Level: 1}, "/ae", true, "ae=[]"},
		{"Accept-Encoding kept", httpcompress.Config{Level: 1, KeepAcceptEncoding: true}, "/ae", true, "ae=[gzip]"},
		{"Accept-Encoding kept for an excluded URI", httpcompress.Config{Level: 1, URIExclude: []string{"^/ae"}}, "/ae", false, "ae=[gzip]"},
	} {
		pol, err := httpcompress.New(buffered(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		cfg := httpConfig(httpPool(m), false, HTTPOptions{Compress: pol})
		var gz, bypassed, pre, post atomic.Int64
		cfg.Compressed = func(coding httpcompress.Coding, in, out int64) {
			if coding == httpcompress.None {
				bypassed.Add(1)
				return
			}
			gz.Add(1)
			pre.Add(in)
			post.Add(out)
		}
		vs := startVS(t, "127.0.141.2:0", cfg)
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(hc.c, get(c.path, "Accept-Encoding: gzip\r\n"))
		r, body := readDecoded(t, hc.br, "GET")
		if got := r.Header.Get("Content-Encoding") == "gzip"; got != c.want {
			t.Errorf("%s: compressed %v, want %v (Content-Encoding %q)", c.name, got, c.want, r.Header.Get("Content-Encoding"))
		}
		if c.want && (gz.Load() != 1 || bypassed.Load() != 0 || pre.Load() != int64(len(body)) || post.Load() <= 0 || post.Load() >= pre.Load() && len(body) > 100) ||
			!c.want && (gz.Load() != 0 || bypassed.Load() != 1) {
			t.Errorf("%s: counted %d compressed (%d to %d bytes), %d bypassed", c.name, gz.Load(), pre.Load(), post.Load(), bypassed.Load())
		}
		if c.ae != "" && body != c.ae {
			t.Errorf("%s: the member saw %q, want %q", c.name, body, c.ae)
		}
		if strings.HasPrefix(c.path, "/page/") && body != pageText(30) {
			t.Errorf("%s: body %.60q", c.name, body)
		}
	}
}

// TestHTTPCompressBrowsers: browser-workarounds and selective decide by
// the client's User-Agent what is compressed (an old browser gets HTML
// only, or nothing and its Accept-Encoding passed on; with selective an
// agent not known to decode compressed answers gets them plain), and the
// CPU saver stops compression while ltmd's load (here read from a meter
// the test moves) is above cpu-saver-high, until it is below
// cpu-saver-low.
func TestHTTPCompressBrowsers(t *testing.T) {
	m := startPageMember(t, "127.15.1.11:0")
	const (
		modern = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
		ie6    = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
		nn407  = "Mozilla/4.07 [en] (X11; I; Linux 2.0.36 i686)"
		curl   = "curl/8.5.0"
	)
	for _, c := range []struct {
		name     string
		cfg      httpcompress.Config
		ua, path string
		want     bool // compressed
	}{
		{"no workarounds: old browser", httpcompress.Config{Level: 1}, nn407, "/style.css", true},
		{"workarounds: modern browser", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, modern, "/style.css", true},
		{"workarounds: IE6 html", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, ie6, "/page/cl/30", true},
		{"workarounds: IE6 css", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, ie6, "/style.css", false},
		{"workarounds: Netscape 4.07 html", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, nn407, "/page/cl/30", false},
		{"workarounds: Netscape 4.07 keeps Accept-Encoding", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, nn407, "/ae", false},
		{"workarounds: curl", httpcompress.Config{Level: 1, BrowserWorkarounds: true}, curl, "/style.css", true},
		{"selective: modern browser", httpcompress.Config{Level: 1, Selective: true}, modern, "/page/chunked/30", true},
		{"selective: curl", httpcompress.Config{Level: 1, Selective: true}, curl, "/page/cl/30", false},
		{"selective: no User-Agent", httpcompress.Config{Level: 1, Selective: true}, "", "/page/cl/30", false},
	} {
		pol, err := httpcompress.New(buffered(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		vs := startVS(t, "127.15.1.1:0", httpConfig(httpPool(m), false, HTTPOptions{Compress: pol}))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		h := "Accept-Encoding: gzip\r\n"
		if c.ua != "" {
			h += "User-Agent: " + c.ua + "\r\n"
		}
		io.WriteString(hc.c, get(c.path, h))
		r, body := readDecoded(t, hc.br, "GET")
		if got := r.Header.Get("Content-Encoding") == "gzip"; got != c.want {
			t.Errorf("%s: compressed %v, want %v", c.name, got, c.want)
		}
		switch {
		case c.path == "/ae":
			if body != "ae=[gzip]" {
				t.Errorf("%s: the member saw %q", c.name, body)
			}
		case body != pageText(30):
			t.Errorf("%s: body %.60q", c.name, body)
		}
		hc.c.Close()
	}

	// The CPU saver: ltmd's load as a meter reads it, one reading per
	// request (Every 0), each reading a second on.
	var mu sync.Mutex
	var load float64
	var cpu time.Duration
	at := time.Unix(1000, 0)
	meter := &hoststat.CPUMeter{Procs: 1, Read: func() (time.Duration, time.Time) {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		cpu += time.Duration(load * float64(time.Second) / 100)
		return cpu, at
	}}
	pol, err := httpcompress.New(httpcompress.Config{Level: 1, BufferSize: 4096, CPUSaver: true, CPUSaverHigh: 90, CPUSaverLow: 75, CPU: meter})
	if err != nil {
		t.Fatal(err)
	}
	vs := startVS(t, "127.15.1.2:0", httpConfig(httpPool(m), false, HTTPOptions{Compress: pol}))
	hc := dialHTTP(t, vs)
	hc.c.SetDeadline(time.Now().Add(20 * time.Second))
	for i, step := range []struct {
		load float64
		want bool
	}{{10, true}, {50, true}, {95, false}, {80, false}, {80, false}, {60, true}, {89, true}, {100, false}} {
		mu.Lock()
		load = step.load
		mu.Unlock()
		io.WriteString(hc.c, get("/page/cl/30", "Accept-Encoding: gzip\r\n"))
		r, body := readDecoded(t, hc.br, "GET")
		if got := r.Header.Get("Content-Encoding") == "gzip"; got != step.want || body != pageText(30) {
			t.Errorf("cpu-saver step %d, load %v%%: compressed %v, want %v (body %.40q)", i, step.load, got, step.want, body)
		}
	}
}
