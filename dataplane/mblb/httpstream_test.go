package mblb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// bigByte is the i-th byte of every large body the tests send, so that a
// byte lost, doubled or moved is seen.
func bigByte(i int) byte { return byte(i*7 + i>>10) }

// startBigMember serves GET /big/<cl|chunked|close>/<n>: a body of n
// bigByte bytes with a Content-Length, chunked (in 32 KiB writes), or
// ending at the close.
func startBigMember(t testing.TB, addr string) *httpMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &httpMember{label: "BIG", ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.reqs.Add(1)
		io.Copy(io.Discard, r.Body)
		var mode string
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/big/%s", &mode); err != nil {
			http.Error(w, "bad path", 400)
			return
		}
		for i := len(mode) - 1; i >= 0; i-- {
			if mode[i] == '/' {
				n, _ = strconv.Atoi(mode[i+1:])
				mode = mode[:i]
				break
			}
		}
		switch mode {
		case "cl":
			w.Header().Set("Content-Length", strconv.Itoa(n))
		case "close":
			w.Header().Set("Connection", "close")
			// net/http would chunk an HTTP/1.1 answer without a length;
			// take the connection and write it raw.
			c, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			brw.WriteString("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
			writeBig(brw, n)
			brw.Flush()
			return
		}
		writeBig(countWriter{w, &m.sent}, n)
	}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				m.conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

// countWriter counts what a member has written (httpMember.sent).
type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n.Add(int64(k))
	return k, err
}

func (c countWriter) Flush() {
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeBig(w io.Writer, n int) {
	buf := make([]byte, 32<<10)
	for off := 0; off < n; {
		k := min(len(buf), n-off)
		for i := range buf[:k] {
			buf[i] = bigByte(off + i)
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		off += k
	}
}

// checkBig reads a body and reports the first byte that is not bigByte's.
func checkBig(r io.Reader, n int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for i := 0; ; i++ {
		b, err := br.ReadByte()
		if err == io.EOF {
			if i != n {
				return fmt.Errorf("body of %d bytes, want %d", i, n)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("after %d bytes: %v", i, err)
		}
		if i >= n || b != bigByte(i) {
			return fmt.Errorf("byte %d is %#x, want %#x (of %d)", i, b, bigByte(i), n)
		}
	}
}

// TestHTTPStreamsLargeResponses: a response over MaxMessageSize goes
// through whole instead of resetting the client (BIG-IP's http profile
// has no body limit), with a Content-Length, chunked or ending at the
// close, and the client connection then carries its next request.
func TestHTTPStreamsLargeResponses(t *testing.T) {
	m := startBigMember(t, "127.0.138.11:0")
	for _, oc := range []bool{false, true} {
		vsAddr := "127.0.138.1:0"
		if oc {
			vsAddr = "127.0.138.2:0"
		}
		vs := startVS(t, vsAddr, httpConfig(httpPool(m), oc, HTTPOptions{}))
		for _, size := range []int{3 << 20, 20 << 20} {
			for _, mode := range []string{"cl", "chunked", "close"} {
				name := fmt.Sprintf("oneconnect=%v %s %d", oc, mode, size)
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(60 * time.Second))
				for round := 0; round < 2; round++ {
					path := fmt.Sprintf("/big/%s/%d", mode, size)
					if round == 1 {
						path = "/big/cl/100"
					}
					if _, err := io.WriteString(c.c, get(path)); err != nil {
						t.Fatalf("%s: round %d: %v", name, round, err)
					}
					r, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
					if err != nil {
						t.Fatalf("%s: round %d: %v", name, round, err)
					}
					want := size
					if round == 1 {
						want = 100
					}
					err = checkBig(r.Body, want)
					r.Body.Close()
					if err != nil {
						t.Fatalf("%s: round %d: %v", name, round, err)
					}
					if mode == "close" {
						// The member ended the connection, so the
						// client's is closed after the answer.
						if _, err := c.br.ReadByte(); err != io.EOF {
							t.Fatalf("%s: client connection not closed after a response ending at the close: %v", name, err)
						}
						break
					}
				}
			}
		}
	}
}

// TestHTTPStreamSlowClient: a client that does not read holds back the
// member (the proxy stops reading it) instead of the proxy buffering the
// body; a pipelined request behind the streamed response is answered
// after it, in order.
func TestHTTPStreamSlowClient(t *testing.T) {
	m := startBigMember(t, "127.0.138.21:0")
	for _, oc := range []bool{false, true} {
		vsAddr := "127.0.138.3:0"
		if oc {
			vsAddr = "127.0.138.4:0"
		}
		vs := startVS(t, vsAddr, httpConfig(httpPool(m), oc, HTTPOptions{}))
		const size = 64 << 20
		c := dialHTTP(t, vs)
		c.c.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := io.WriteString(c.c, get(fmt.Sprintf("/big/cl/%d", size))+get("/big/chunked/5")); err != nil {
			t.Fatal(err)
		}
		// Wait until the member's progress stops (bounded), reading
		// nothing.
		start := m.sent.Load()
		before := start
		for i, still := 0, 0; i < 200 && still < 5; i++ {
			time.Sleep(20 * time.Millisecond)
			now := m.sent.Load()
			if now == before {
				still++
			} else {
				still = 0
			}
			before = now
		}
		// What the proxy holds for the client stays near the engine's
		// message limit (one part of up to MaxMessageSize, and the read
		// that passed it).
		if held := heldForClients(vs); held > 2*defaultMaxMessage {
			t.Errorf("oneconnect=%v loops=%v: the proxy holds %d bytes of the response for a client that reads none", oc, onLoops, held)
		}
		if sent := m.sent.Load() - start; sent >= size {
			t.Errorf("oneconnect=%v loops=%v: the member sent all %d bytes to a client that read none: the proxy buffered them", oc, onLoops, sent)
		}
		for i, want := range []int{size, 5} {
			r, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
			if err != nil {
				t.Fatalf("oneconnect=%v: response %d: %v", oc, i, err)
			}
			err = checkBig(r.Body, want)
			r.Body.Close()
			if err != nil {
				t.Fatalf("oneconnect=%v: response %d: %v", oc, i, err)
			}
		}
	}
}

// heldForClients is the bytes of responses waiting in the virtual's
// sessions' response queues.
func heldForClients(vs *testVS) int {
	vs.mu.Lock()
	sessions := append([]*ClientConn(nil), vs.sessions...)
	vs.mu.Unlock()
	n := 0
	for _, s := range sessions {
		s.mu.Lock()
		for _, r := range s.slots {
			if r != nil {
				n += len(r.b)
			}
		}
		s.mu.Unlock()
	}
	return n
}

// TestHTTPStreamRefusedUpgrade: an upgrade answered with a large body
// (not 101) leaves the connection HTTP, and its next request is served.
func TestHTTPStreamRefusedUpgrade(t *testing.T) {
	m := startBigMember(t, "127.0.138.31:0")
	vs := startVS(t, "127.0.138.5:0", httpConfig(httpPool(m), false, HTTPOptions{}))
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	upgrade := "GET /big/cl/3145728 HTTP/1.1\r\nHost: www\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	for i, req := range []string{upgrade, get("/big/chunked/7")} {
		if _, err := io.WriteString(c.c, req); err != nil {
			t.Fatal(err)
		}
		r, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		want := 3 << 20
		if i == 1 {
			want = 7
		}
		err = checkBig(r.Body, want)
		r.Body.Close()
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
}

// BenchmarkHTTPLargeResponse downloads 20 MB bodies on one keep-alive
// connection, from the member directly and through the virtual (which
// streams them): b.SetBytes gives the throughput.
func BenchmarkHTTPLargeResponse(b *testing.B) {
	m := startBigMember(b, "127.0.138.41:0")
	vs := startVS(b, "127.0.138.6:0", httpConfig(httpPool(m), false, HTTPOptions{}))
	const size = 20 << 20
	for _, bc := range []struct{ name, addr string }{{"direct", m.ln.Addr().String()}, {"proxied", vs.addr()}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := net.Dial("tcp", bc.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReaderSize(c, 256<<10)
			req := get(fmt.Sprintf("/big/cl/%d", size))
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := io.WriteString(c, req); err != nil {
					b.Fatal(err)
				}
				r, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, r.Body); err != nil || n != size {
					b.Fatalf("%d bytes, %v", n, err)
				}
				r.Body.Close()
			}
		})
	}
}
