package h2gw

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatewayFor serves HTTP/2 cleartext on a loopback listener, each
// connection through Serve to the HTTP/1.1 server h, and returns an
// HTTP/2 client for it, its base URL and a count of the engine
// connections dialed.
func gatewayFor(t *testing.T, cfg *Config, h http.Handler) (*http.Client, string, *atomic.Int64) {
	t.Helper()
	backend := httptest.NewServer(h)
	t.Cleanup(backend.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dials := new(atomic.Int64)
	t.Cleanup(serveAll(ln, cfg, func() (net.Conn, error) {
		dials.Add(1)
		return net.Dial("tcp", backend.Listener.Addr().String())
	}))
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true) // prior knowledge
	tr := &http.Transport{Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, "http://" + ln.Addr().String(), dials
}

// serveAll serves every connection ln accepts through Serve, dialing
// engine connections with dial, until ln is closed; the returned
// function closes ln and waits for the connections to end.
func serveAll(ln net.Listener, cfg *Config, dial Dialer) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				Serve(c, cfg, dial)
			}()
		}
	}()
	return func() {
		ln.Close()
		wg.Wait()
	}
}

func TestGatewayForwards(t *testing.T) {
	cfg := &Config{MaxConcurrentStreams: 10, InsertHeader: "X-HTTP2", Stats: new(Stats)}
	client, base, _ := gatewayFor(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", fmt.Sprintf("%s %s %s host=%s cl=%d te=%v h2=%s cookie=%s body=%s",
			r.Proto, r.Method, r.RequestURI, r.Host, r.ContentLength, r.TransferEncoding, r.Header.Get("X-HTTP2"), r.Header.Get("Cookie"), body))
		w.Header().Set("Connection", "keep-alive, X-Private")
		w.Header().Set("X-Private", "hop")
		w.Header().Set("Keep-Alive", "timeout=5")
		if r.Method != http.MethodHead {
			io.WriteString(w, "hello "+r.URL.Path)
		}
	}))
	cases := []struct {
		name, method, path string
		body               io.Reader
		length             int64 // the request's ContentLength; -1: not declared
		cookies            []string
		seen, answer       string
	}{
		{name: "GET", method: "GET", path: "/a?x=1", cookies: []string{"a=1", "b=2"},
			seen: "HTTP/1.1 GET /a?x=1 host=HOST cl=0 te=[] h2=true cookie=a=1; b=2 body=", answer: "hello /a"},
		{name: "POST with a length", method: "POST", path: "/p", body: strings.NewReader("payload"), length: 7,
			seen: "HTTP/1.1 POST /p host=HOST cl=7 te=[] h2=true cookie= body=payload", answer: "hello /p"},
		{name: "POST without a length goes chunked", method: "POST", path: "/c", body: io.MultiReader(strings.NewReader("part1"), strings.NewReader("part2")), length: -1,
			seen: "HTTP/1.1 POST /c host=HOST cl=-1 te=[chunked] h2=true cookie= body=part1part2", answer: "hello /c"},
		{name: "empty POST declares 0", method: "POST", path: "/e", length: 0,
			seen: "HTTP/1.1 POST /e host=HOST cl=0 te=[] h2=true cookie= body=", answer: "hello /e"},
		{name: "HEAD", method: "HEAD", path: "/h",
			seen: "HTTP/1.1 HEAD /h host=HOST cl=0 te=[] h2=true cookie= body=", answer: ""},
	}
	host := strings.TrimPrefix(base, "http://")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, base+c.path, c.body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = c.length
			if c.body == nil {
				req.Body = http.NoBody
			}
			for _, ck := range c.cookies {
				req.Header.Add("Cookie", ck) // HTTP/2 sends each as its own field
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
				t.Fatalf("%s %d", resp.Proto, resp.StatusCode)
			}
			if want := strings.ReplaceAll(c.seen, "HOST", host); resp.Header.Get("X-Seen") != want {
				t.Errorf("the member saw\n%s\nwant\n%s", resp.Header.Get("X-Seen"), want)
			}
			if string(body) != c.answer {
				t.Errorf("body %q, want %q", body, c.answer)
			}
			for _, f := range []string{"X-Private", "Keep-Alive", "Connection"} {
				if v := resp.Header.Get(f); v != "" {
					t.Errorf("%s: %q reached the client", f, v)
				}
			}
		})
	}
	if n := cfg.Stats.TotalStreams.Load(); n != int64(len(cases)) {
		t.Errorf("streams counted %d, want %d", n, len(cases))
	}
}

// Many streams at once on one connection, on lanes: each gets its own
// answer, and no more lanes are opened than streams were in flight.
func TestGatewayConcurrentStreams(t *testing.T) {
	cfg := &Config{MaxConcurrentStreams: 100, Stats: new(Stats)}
	client, base, dials := gatewayFor(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat(r.URL.Path, 100))
	}))
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/s%02d", i)
			resp, err := client.Get(base + path)
			if err != nil {
				errs <- err
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != strings.Repeat(path, 100) {
				errs <- fmt.Errorf("%s answered %.20q...", path, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d, m := dials.Load(), cfg.Stats.MaxStreams.Load(); d < 1 || d > m {
		t.Errorf("%d engine connections for one client connection, want 1 to %d (the most streams at once)", d, m)
	}
	if m := cfg.Stats.MaxStreams.Load(); m < 1 || m > 40 {
		t.Errorf("most concurrent streams %d, want 1-40", m)
	}
}

// An engine connection closed after a response is replaced for the
// next stream.
func TestGatewayEngineCloses(t *testing.T) {
	client, base, dials := gatewayFor(t, &Config{MaxConcurrentStreams: 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	for _, p := range []string{"/one", "/close", "/two", "/close", "/three"} {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "ok "+p {
			t.Fatalf("%s answered %d %q", p, resp.StatusCode, body)
		}
	}
	if d := dials.Load(); d != 3 {
		t.Errorf("%d engine connections, want 3 (two closed)", d)
	}
}

// A streamed response reaches the client as it comes, and an interim
// response is not taken for the final one.
func TestGatewayStreamsResponses(t *testing.T) {
	release := make(chan struct{})
	client, base, _ := gatewayFor(t, &Config{MaxConcurrentStreams: 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "first;")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "second")
	}))
	resp, err := client.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first;" {
		t.Fatalf("first part %q, %v", buf, err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != "second" {
		t.Fatalf("rest %q", rest)
	}
}

// A stream the client gives up does not stop the ones after it.
func TestGatewayAbandonedStream(t *testing.T) {
	client, base, dials := gatewayFor(t, &Config{MaxConcurrentStreams: 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, bytes.NewReader(bytes.Repeat([]byte("x"), 64<<10)))
	}))
	resp, err := client.Get(base + "/big")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(resp.Body, make([]byte, 10))
	resp.Body.Close() // RST_STREAM
	resp, err = client.Get(base + "/next")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != 64<<10 {
		t.Fatalf("next answered %d bytes", len(body))
	}
	if d := dials.Load(); d > 2 {
		t.Errorf("%d engine connections, want 1 or 2 (the next stream may not wait for the abandoned body's drain)", d)
	}
}
