package mblb

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// uploadMember answers every request with "n=<body bytes> sha=<sha256 of
// the body>". While gate is set (closed channel not yet) it stops
// reading a body after its first MiB, as a slow application does; read
// counts the body bytes it has read.
type uploadMember struct {
	ln   net.Listener
	gate chan struct{}
	read atomic.Int64
	reqs atomic.Int64
}

func startUploadMember(t *testing.T, addr string, gated bool) *uploadMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &uploadMember{ln: ln}
	if gated {
		m.gate = make(chan struct{})
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetReadBuffer(32 << 10)
			}
			go m.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return m
}

func (m *uploadMember) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		m.reqs.Add(1)
		h := sha256.New()
		buf := make([]byte, 16<<10)
		var n int64
		for {
			if m.gate != nil && n >= 1<<20 {
				<-m.gate
			}
			k, err := r.Body.Read(buf)
			h.Write(buf[:k])
			n += int64(k)
			m.read.Add(int64(k))
			if err != nil {
				break
			}
		}
		out := fmt.Sprintf("n=%d sha=%s", n, hex.EncodeToString(h.Sum(nil)))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(out), out)
	}
}

// uploadBody is n bytes of bigByte and its expected answer.
func uploadBody(n int) ([]byte, string) {
	b := make([]byte, n)
	for i := range b {
		b[i] = bigByte(i)
	}
	sum := sha256.Sum256(b)
	return b, fmt.Sprintf("n=%d sha=%s", n, hex.EncodeToString(sum[:]))
}

// chunked frames b in chunks of size.
func chunked(b []byte, size int) []byte {
	var out []byte
	for len(b) > 0 {
		k := min(size, len(b))
		out = append(out, strconv.FormatInt(int64(k), 16)...)
		out = append(out, "\r\n"...)
		out = append(out, b[:k]...)
		out = append(out, "\r\n"...)
		b = b[k:]
	}
	return append(out, "0\r\nX-Trailer: t\r\n\r\n"...)
}

// uploadPool is a pool of the one upload member m.
func uploadPool(m *uploadMember) *testPool {
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	pool.members = append(pool.members, Member{ID: 1, Addr: rawsock.AddrPortOf(m.ln.Addr()), Pool: "/Common/up", Name: "UP"})
	return pool
}

// postUp is a POST /up carrying body with a Content-Length
// (chunkSize 0), or chunked in chunks of chunkSize.
func postUp(body []byte, chunkSize int) []byte {
	if chunkSize == 0 {
		req := fmt.Appendf(nil, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
		return append(req, body...)
	}
	return append([]byte("POST /up HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n"), chunked(body, chunkSize)...)
}

// smallPostAnswered sends a 3-byte POST on c and checks an upload
// member's answer to it: the connection is HTTP again after an upload.
func smallPostAnswered(t *testing.T, c *httpClient, what string) {
	t.Helper()
	_, bodies, err := c.do("POST", "POST /small HTTP/1.1\r\nHost: www\r\nContent-Length: 3\r\n\r\nabc")
	if err != nil || len(bodies) != 1 || !strings.HasPrefix(bodies[0], "n=3 ") {
		t.Fatalf("%s: %q %v", what, bodies, err)
	}
}

// TestHTTPUploadStreams: 5 MiB request bodies, with a Content-Length and
// chunked, pass a virtual whose message limit is 1 MiB, with and
// without OneConnect; the member receives every byte in order, and the
// client connection goes on with its next request.
func TestHTTPUploadStreams(t *testing.T) {
	m := startUploadMember(t, "127.0.125.11:0", false)
	pool := uploadPool(m)
	body, want := uploadBody(5 << 20)
	for _, oc := range []bool{false, true} {
		vs := startVS(t, "127.0.125.1:0", httpConfig(pool, oc, HTTPOptions{}))
		for _, enc := range []string{"length", "chunked"} {
			t.Run(fmt.Sprintf("oneconnect=%v/%s", oc, enc), func(t *testing.T) {
				c, errc := sendUpload(t, vs, body, enc, 100000)
				uploadAnswered(t, c.br, want, errc)
				smallPostAnswered(t, c, "next request")
			})
		}
		if st := vs.e.Stats(); st.Oversize != 0 {
			t.Fatalf("%d clients reset as oversize", st.Oversize)
		}
	}
}

// TestHTTPUploadSlowMember: a member that stops reading an upload holds
// the client back instead of letting the proxy buffer it: the client
// cannot write a 32 MiB body while the member reads nothing, and the body
// arrives whole once it reads again.
func TestHTTPUploadSlowMember(t *testing.T) {
	m := startUploadMember(t, "127.0.125.21:0", true)
	pool := uploadPool(m)
	vs := startVS(t, "127.0.125.2:0", httpConfig(pool, false, HTTPOptions{}))
	body, want := uploadBody(32 << 20)
	c := dialHTTP(t, vs)
	c.c.(*net.TCPConn).SetWriteBuffer(32 << 10)
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	var wrote atomic.Int64
	errc := make(chan error, 1)
	go func() {
		_, err := fmt.Fprintf(c.c, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
		for off := 0; err == nil && off < len(body); off += 64 << 10 {
			_, err = c.c.Write(body[off:min(off+64<<10, len(body))])
			wrote.Add(64 << 10)
		}
		errc <- err
	}()
	// The member reads its first MiB, then nothing for a while.
	for i := 0; i < 500 && m.read.Load() < 1<<20; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	held := wrote.Load()
	if held >= int64(len(body)) {
		t.Fatalf("the client wrote all %d bytes while the member read %d: the proxy buffered the upload", held, m.read.Load())
	}
	close(m.gate)
	uploadAnswered(t, c.br, want, errc)
	t.Logf("while the member read 1 MiB, the client got %d of %d bytes out (kernel buffers and the proxy's bounded share)", held, len(body))
}

// TestHTTPUploadKeepsItsConnection: with OneConnect (max-size 1), a
// request of another client that arrives while an upload is on the
// only pooled connection is not written into the upload's body: it gets
// a connection of its own and its answer, and the upload arrives whole.
func TestHTTPUploadKeepsItsConnection(t *testing.T) {
	m := startUploadMember(t, "127.0.125.31:0", true)
	pool := uploadPool(m)
	cfg := httpConfig(pool, true, HTTPOptions{})
	cfg.OneConnect.MaxSize = 1
	vs := startVS(t, "127.0.125.3:0", cfg)
	body, want := uploadBody(8 << 20)
	a := dialHTTP(t, vs)
	a.c.SetDeadline(time.Now().Add(30 * time.Second))
	errc := make(chan error, 1)
	go func() {
		req := fmt.Appendf(nil, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
		_, err := a.c.Write(append(req, body...))
		errc <- err
	}()
	for i := 0; i < 500 && m.read.Load() < 1<<20; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	b := dialHTTP(t, vs)
	b.c.SetDeadline(time.Now().Add(10 * time.Second))
	smallPostAnswered(t, b, "the other client's request during the upload")
	close(m.gate)
	uploadAnswered(t, a.br, want, errc)
}

// TestHTTPUploadMemberFails: a member that resets the connection in the
// middle of an upload is not sent the upload again elsewhere (part of
// the body has gone): the client is reset.
func TestHTTPUploadMemberFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.125.41:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				// Read 2 MiB of the upload, then reset.
				io.CopyN(io.Discard, c, 2<<20)
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}()
		}
	}()
	good := startUploadMember(t, "127.0.125.42:0", false)
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	pool.members = append(pool.members,
		Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Pool: "/Common/up", Name: "BAD"},
		Member{ID: 2, Addr: rawsock.AddrPortOf(good.ln.Addr()), Pool: "/Common/up", Name: "GOOD"})
	vs := startVS(t, "127.0.125.4:0", httpConfig(pool, false, HTTPOptions{}))
	body, _ := uploadBody(8 << 20)
	for i := 0; i < 4 && conns.Load() == 0; i++ {
		c := dialHTTP(t, vs)
		c.c.SetDeadline(time.Now().Add(20 * time.Second))
		go func() {
			req := fmt.Appendf(nil, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
			c.c.Write(append(req, body...))
		}()
		r, err := http.ReadResponse(c.br, nil)
		if conns.Load() == 0 {
			// Balanced to the good member: it must have answered.
			if err != nil {
				t.Fatalf("the good member's upload: %v", err)
			}
			io.Copy(io.Discard, r.Body)
			continue
		}
		if err == nil {
			b, _ := io.ReadAll(r.Body)
			t.Fatalf("an upload cut by its member was answered: %q", b)
		}
	}
	if conns.Load() == 0 {
		t.Fatal("no upload reached the failing member")
	}
	if n := good.reqs.Load(); n > 3 {
		t.Fatalf("the good member saw %d uploads: the cut one was sent again", n)
	}
}

// TestHTTPUploadClientLeaves: a client that goes away in the middle of an
// upload on a pooled connection takes that connection down with it (the
// member holds half a request); the next upload gets another and
// arrives whole.
func TestHTTPUploadClientLeaves(t *testing.T) {
	m := startUploadMember(t, "127.0.125.51:0", false)
	pool := uploadPool(m)
	cfg := httpConfig(pool, true, HTTPOptions{})
	cfg.OneConnect.MaxSize = 1
	vs := startVS(t, "127.0.125.5:0", cfg)
	body, want := uploadBody(4 << 20)
	a := dialHTTP(t, vs)
	fmt.Fprintf(a.c, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
	a.c.Write(body[:2<<20])
	for i := 0; i < 500 && m.read.Load() < 1<<20; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	a.c.Close()
	legs := func() int {
		n := 0
		vs.e.Legs(func(*Leg) bool { n++; return true })
		return n
	}
	for i := 0; i < 500 && legs() > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := legs(); n != 0 {
		t.Fatalf("%d server connections left after the client left its upload", n)
	}
	b := dialHTTP(t, vs)
	b.c.SetDeadline(time.Now().Add(20 * time.Second))
	go fmt.Fprintf(b.c, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	r, err := http.ReadResponse(b.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	if string(got) != want {
		t.Fatalf("member saw %q, want %q", got, want)
	}
}

// TestHTTPUploadNoMember: an upload no member can take is answered by
// the fallback host's redirect (which closes the connection, as every
// fallback answer does), while its body is still arriving.
func TestHTTPUploadNoMember(t *testing.T) {
	m := startUploadMember(t, "127.0.125.61:0", false)
	pool := uploadPool(m)
	pool.disabled[1] = true
	vs := startVS(t, "127.0.125.6:0", httpConfig(pool, false, HTTPOptions{Fallback: "http://sorry.example/"}))
	body, _ := uploadBody(3 << 20)
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	go fmt.Fprintf(c.c, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	if r.StatusCode != 302 || r.Header.Get("Location") != "http://sorry.example/" {
		t.Fatalf("answer: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	if n := m.reqs.Load(); n != 0 {
		t.Fatalf("the disabled member saw %d requests", n)
	}
}

// tooBigRule answers every POST itself with 413 and keeps the
// connection: an upload's body is then read and dropped.
type tooBigRule struct{}

func (tooBigRule) OnHTTPRequest(x *HTTPEvent) error {
	if strings.HasPrefix(string(x.Message()), "POST ") {
		x.Respond([]byte("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 7\r\n\r\ntoo big"), true)
	}
	return nil
}
func (tooBigRule) OnHTTPResponse(*HTTPEvent) error { return nil }

// TestHTTPUploadAnsweredByRule: an upload the rule answers itself goes to
// no member; its body is dropped as it arrives and the next request on
// the connection is served.
func TestHTTPUploadAnsweredByRule(t *testing.T) {
	m := startUploadMember(t, "127.0.125.71:0", false)
	pool := uploadPool(m)
	vs := startVS(t, "127.0.125.7:0", httpConfig(pool, false, HTTPOptions{}), func(net.Conn) ClientOptions {
		return ClientOptions{HTTPRule: tooBigRule{}}
	})
	body, _ := uploadBody(3 << 20)
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(20 * time.Second))
	go fmt.Fprintf(c.c, "POST /up HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n%sGET /next HTTP/1.1\r\nHost: www\r\n\r\n", chunked(body, 50000))
	for _, want := range []string{"413", "200"} {
		r, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("answer %s: %v", want, err)
		}
		io.Copy(io.Discard, r.Body)
		if strconv.Itoa(r.StatusCode) != want {
			t.Fatalf("answer %d, want %s", r.StatusCode, want)
		}
	}
	if n := m.reqs.Load(); n != 1 {
		t.Fatalf("the member saw %d requests, want the GET only", n)
	}
}

// BenchmarkHTTPUpload is 20 MiB uploads on one keep-alive connection,
// straight to the member and through the virtual (whose message limit
// is 1 MiB, so every upload streams).
func BenchmarkHTTPUpload(b *testing.B) {
	m := startBigMember(b, "127.0.125.81:0")
	vs := startVS(b, "127.0.125.8:0", httpConfig(httpPool(m), false, HTTPOptions{}))
	const size = 20 << 20
	body := make([]byte, size)
	for i := range body {
		body[i] = bigByte(i)
	}
	head := fmt.Sprintf("POST /big/cl/0 HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", size)
	for _, bc := range []struct{ name, addr string }{{"direct", m.ln.Addr().String()}, {"proxied", vs.addr()}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := net.Dial("tcp", bc.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bufs := net.Buffers{[]byte(head), body}
				if _, err := bufs.WriteTo(c); err != nil {
					b.Fatal(err)
				}
				r, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		})
	}
}

// sendUpload dials vs and posts body on a goroutine, with its
// Content-Length (enc "length") or in chunks of chunk bytes, so that the
// reader can take the answer while the upload goes; errc gets the
// write's result.
func sendUpload(t *testing.T, vs *testVS, body []byte, enc string, chunk int) (*httpClient, <-chan error) {
	t.Helper()
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	req := postUp(body, 0)
	if enc == "chunked" {
		req = postUp(body, chunk)
	}
	errc := make(chan error, 1)
	go func() { _, err := c.c.Write(req); errc <- err }()
	return c, errc
}

// uploadAnswered reads the member's answer to an upload from br: it must
// report the body the client sent (want), and the client's write of it
// (errc) must have succeeded.
func uploadAnswered(t *testing.T, br *bufio.Reader, want string, errc <-chan error) {
	t.Helper()
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	if string(got) != want {
		t.Fatalf("member saw %q, want %q", got, want)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
