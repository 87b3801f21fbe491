package h2member

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// h2cMember serves handler over cleartext HTTP/2 with prior knowledge on
// addr.
func h2cMember(t *testing.T, addr string, handler http.Handler) (net.Listener, *http.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: handler, Protocols: &p}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln, srv
}

func testHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		for k, vv := range r.Trailer {
			w.Header().Add("Trailer", "Echo-"+k) // declared: it goes chunked
			defer w.Header().Set("Echo-"+k, strings.Join(vv, ","))
		}
		fmt.Fprintf(w, "%s %s %d te=%s proto=%d", r.Method, r.URL.Path, len(b), r.Header.Get("Te"), r.ProtoMajor)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		for i := range 3 {
			fmt.Fprintf(w, "m%d;", i)
			w.(http.Flusher).Flush()
		}
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	})
	return mux
}

func openTo(t *testing.T, p *Pool, addr string) net.Conn {
	t.Helper()
	remote, _ := net.ResolveTCPAddr("tcp", addr)
	c, err := p.Open(context.Background(), Target{Key: addr, Remote: remote, Dial: func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readResp(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestBridgePipelinedAndTrailers(t *testing.T) {
	ln, _ := h2cMember(t, "127.0.250.201:0", testHandler())
	st := &Stats{}
	p := New(Config{Stats: st})
	defer p.Close()
	c := openTo(t, p, ln.Addr().String())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	// Three pipelined requests in one write: a GET, a chunked POST with
	// trailers, a Content-Length POST.
	io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\nTE: trailers\r\nConnection: keep-alive\r\n\r\n"+
		"POST /echo HTTP/1.1\r\nHost: a\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 5\r\n\r\n"+
		"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nwxyz")
	br := bufio.NewReader(c)
	_, body := readResp(t, br)
	if body != "GET /echo 0 te=trailers proto=2" {
		t.Errorf("GET: %q", body)
	}
	resp, body := readResp(t, br)
	if body != "POST /echo 5 te= proto=2" || resp.Trailer.Get("Echo-X-Sum") != "5" {
		t.Errorf("chunked POST: %q trailers %v", body, resp.Trailer)
	}
	_, body = readResp(t, br)
	if body != "POST /echo 4 te= proto=2" {
		t.Errorf("POST: %q", body)
	}
	// A streamed gRPC-shaped response: chunked, its trailers after.
	io.WriteString(c, "POST /stream HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
	resp, body = readResp(t, br)
	if body != "m0;m1;m2;" || resp.Trailer.Get("Grpc-Status") != "0" || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("stream: %q trailers %v", body, resp.Trailer)
	}
	// A reset stream is a 502; the engine connection goes on.
	io.WriteString(c, "GET /reset HTTP/1.1\r\nHost: a\r\n\r\nGET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
	resp, _ = readResp(t, br)
	if resp.StatusCode != 502 {
		t.Errorf("reset: %d", resp.StatusCode)
	}
	_, body = readResp(t, br)
	if !strings.HasPrefix(body, "GET /echo") {
		t.Errorf("after reset: %q", body)
	}
	if st.TotalConnections.Load() != 1 || st.TotalStreams.Load() != 6 || st.Failed.Load() != 1 {
		t.Errorf("stats: conns %d streams %d failed %d", st.TotalConnections.Load(), st.TotalStreams.Load(), st.Failed.Load())
	}
}

func TestBridgeSharesConnectionAndLimit(t *testing.T) {
	ln, _ := h2cMember(t, "127.0.250.202:0", testHandler())
	st := &Stats{}
	p := New(Config{Stats: st, MaxConcurrentStreams: 100})
	defer p.Close()
	for range 3 {
		c := openTo(t, p, ln.Addr().String())
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
		readResp(t, bufio.NewReader(c))
	}
	if n := st.TotalConnections.Load(); n != 1 {
		t.Errorf("engine connections to one member used %d HTTP/2 connections, want 1", n)
	}
}

func TestBridgeMemberGone(t *testing.T) {
	ln, srv := h2cMember(t, "127.0.250.203:0", testHandler())
	p := New(Config{})
	defer p.Close()
	c := openTo(t, p, ln.Addr().String())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
	readResp(t, br)
	srv.Close() // the listener and the connection go
	io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
	resp, _ := readResp(t, br)
	if resp.StatusCode != 502 {
		t.Errorf("member gone: %d", resp.StatusCode)
	}
}

func TestBridgeConnectionClose(t *testing.T) {
	ln, _ := h2cMember(t, "127.0.250.204:0", testHandler())
	p := New(Config{})
	defer p.Close()
	c := openTo(t, p, ln.Addr().String())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	br := bufio.NewReader(c)
	readResp(t, br)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after Connection: close: %v, want EOF", err)
	}
}

func TestOutboundDropsConnectionFields(t *testing.T) {
	b := &bridge{ctx: context.Background(), t: Target{TLS: true}}
	in, err := http.ReadRequest(bufio.NewReader(strings.NewReader(
		"GET /x?q=1 HTTP/1.1\r\nHost: h\r\nConnection: X-Hop, keep-alive\r\nX-Hop: 1\r\nKeep-Alive: 5\r\nUpgrade: foo\r\nTE: gzip, trailers\r\nX-Keep: 2\r\n\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	out := b.outbound(&exchange{in: in})
	if out.URL.String() != "https://h/x?q=1" {
		t.Errorf("url %s", out.URL)
	}
	for _, k := range []string{"Connection", "X-Hop", "Keep-Alive", "Upgrade"} {
		if _, ok := out.Header[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	if out.Header.Get("Te") != "trailers" || out.Header.Get("X-Keep") != "2" {
		t.Errorf("headers %v", out.Header)
	}
}
