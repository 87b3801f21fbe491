package mblb

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// httpMember is a labelled HTTP backend: it answers every request with
// "<label> xff=<X-Forwarded-For> cookie=<Cookie> <method> <path>" and
// counts the connections it accepted.
type httpMember struct {
	label string
	ln    net.Listener
	conns atomic.Int64
	reqs  atomic.Int64
	sent  atomic.Int64 // body bytes written (startBigMember)
}

func startHTTPMember(t *testing.T, addr, label string) *httpMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &httpMember{label: label, ln: ln}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.reqs.Add(1)
			body, _ := io.ReadAll(r.Body)
			switch r.URL.Path {
			case "/ws":
				// A protocol switch: 101, then every byte echoed.
				c, brw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				defer c.Close()
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
				if n := brw.Reader.Buffered(); n > 0 {
					b, _ := brw.Reader.Peek(n)
					c.Write(b)
					brw.Reader.Discard(n)
				}
				io.Copy(c, c)
				return
			case "/nocontent":
				w.WriteHeader(http.StatusNoContent)
				return
			case "/chunked":
				w.(http.Flusher).Flush() // no Content-Length: chunked
			}
			fmt.Fprintf(w, "%s xff=%s cookie=%s %s %s body=%s", label, r.Header.Get("X-Forwarded-For"),
				r.Header.Get("Cookie"), r.Method, r.URL.Path, body)
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

func (m *httpMember) member(id int) Member {
	return Member{ID: MemberID(id), Addr: rawsock.AddrPortOf(m.ln.Addr()), Pool: "/Common/web_pool", Name: m.label}
}

func httpPool(ms ...*httpMember) *testPool {
	p := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	for i, m := range ms {
		p.members = append(p.members, m.member(i+1))
	}
	return p
}

// httpClient keeps one connection to the virtual and sends requests on it.
type httpClient struct {
	c  net.Conn
	br *bufio.Reader
}

func dialHTTP(t *testing.T, vs *testVS) *httpClient {
	t.Helper()
	c, err := net.Dial("tcp", vs.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &httpClient{c: c, br: bufio.NewReader(c)}
}

// do sends raw requests (pipelined when several) and reads one response
// per request.
func (h *httpClient) do(method string, reqs ...string) ([]*http.Response, []string, error) {
	if _, err := io.WriteString(h.c, strings.Join(reqs, "")); err != nil {
		return nil, nil, err
	}
	var rs []*http.Response
	var bodies []string
	for range reqs {
		r, err := http.ReadResponse(h.br, &http.Request{Method: method})
		if err != nil {
			return rs, bodies, err
		}
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return rs, bodies, err
		}
		rs = append(rs, r)
		bodies = append(bodies, string(b))
	}
	return rs, bodies, nil
}

func get(path string, hdr ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: www\r\n" + strings.Join(hdr, "") + "\r\n"
}

func label(body string) string { return strings.SplitN(body, " ", 2)[0] }

func httpConfig(p *testPool, oc bool, opts HTTPOptions) Config {
	cfg := baseConfig(p, nil)
	cfg.Request = Framing{Mode: HTTP, HTTP: opts}
	if oc {
		cfg.OneConnect = &OneConnect{MaxSize: 4}
	}
	return cfg
}

// TestHTTPBalancing is the seed 003/004 lesson: one client connection
// carrying many users' requests (an SSL gateway's reused connection) goes
// to one member with the http profile alone, and is spread request by
// request with OneConnect.
func TestHTTPBalancing(t *testing.T) {
	tests := []struct {
		name       string
		oneConnect bool
		want       map[string]int
	}{
		{"per connection", false, map[string]int{"W1": 8}},
		{"oneconnect per request", true, map[string]int{"W1": 4, "W2": 4}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w1 := startHTTPMember(t, fmt.Sprintf("127.0.121.%d:0", 10*i+1), "W1")
			w2 := startHTTPMember(t, fmt.Sprintf("127.0.121.%d:0", 10*i+2), "W2")
			vs := startVS(t, fmt.Sprintf("127.0.121.%d:0", 10*i+3), httpConfig(httpPool(w1, w2), tc.oneConnect, HTTPOptions{}))
			c := dialHTTP(t, vs)
			got := map[string]int{}
			for j := 0; j < 8; j++ {
				_, bodies, err := c.do("GET", get(fmt.Sprintf("/u%d", j)))
				if err != nil {
					t.Fatal(err)
				}
				got[label(bodies[0])]++
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("requests per member %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHTTPCookiePersistence: the inserted cookie has BIG-IP's encoding,
// and a request carrying it goes to its member on a shared connection.
func TestHTTPCookiePersistence(t *testing.T) {
	w1 := startHTTPMember(t, "127.0.121.31:0", "W1")
	w2 := startHTTPMember(t, "127.0.121.32:0", "W2")
	spec := httpx.CookieSpec{Name: "BIGipServerweb_pool", HTTPOnly: true}
	vs := startVS(t, "127.0.121.33:0", httpConfig(httpPool(w1, w2), true, HTTPOptions{Cookie: spec, InsertXFF: true}))
	c := dialHTTP(t, vs)
	rs, bodies, err := c.do("GET", get("/first"))
	if err != nil {
		t.Fatal(err)
	}
	first := label(bodies[0])
	sc := rs[0].Header.Get("Set-Cookie")
	want := map[string]*httpMember{"W1": w1, "W2": w2}[first]
	enc := httpx.EncodeMember(rawsock.AddrPortOf(want.ln.Addr()))
	if sc != "BIGipServerweb_pool="+enc+"; path=/; Httponly" {
		t.Fatalf("Set-Cookie %q, want the encoding of %s (%s)", sc, first, enc)
	}
	if !strings.Contains(bodies[0], "xff=127.0.0.1 ") {
		t.Errorf("member did not see X-Forwarded-For: %q", bodies[0])
	}
	cookie := "Cookie: BIGipServerweb_pool=" + enc + "\r\n"
	for j := 0; j < 6; j++ {
		rs, bodies, err := c.do("GET", get("/again", cookie))
		if err != nil {
			t.Fatal(err)
		}
		if label(bodies[0]) != first {
			t.Fatalf("request %d with %s's cookie went to %s", j, first, label(bodies[0]))
		}
		if rs[0].Header.Get("Set-Cookie") != "" {
			t.Errorf("cookie inserted again although the request carried it")
		}
	}
	// A cookie for a member not in the pool is ignored: plain balancing.
	if _, _, err := c.do("GET", get("/stale", "Cookie: BIGipServerweb_pool=1.2.0000\r\n")); err != nil {
		t.Fatal(err)
	}
}

// TestHTTPFraming covers the response shapes that end without a
// Content-Length, pipelined requests, and the client's close.
func TestHTTPFraming(t *testing.T) {
	w1 := startHTTPMember(t, "127.0.121.41:0", "W1")
	vs := startVS(t, "127.0.121.43:0", httpConfig(httpPool(w1), true, HTTPOptions{}))
	tests := []struct {
		name   string
		method string
		reqs   []string
		want   []string // body prefixes
	}{
		{"pipelined", "GET", []string{get("/a"), get("/b"), get("/c")}, []string{"W1 xff= cookie= GET /a", "W1 xff= cookie= GET /b", "W1 xff= cookie= GET /c"}},
		{"chunked response", "GET", []string{get("/chunked"), get("/d")}, []string{"W1 xff= cookie= GET /chunked", "W1 xff= cookie= GET /d"}},
		{"204", "GET", []string{get("/nocontent"), get("/e")}, []string{"", "W1 xff= cookie= GET /e"}},
		{"HEAD", "HEAD", []string{"HEAD /h HTTP/1.1\r\nHost: www\r\n\r\n"}, []string{""}},
		{"POST body", "POST", []string{"POST /p HTTP/1.1\r\nHost: www\r\nContent-Length: 5\r\n\r\nhello"}, []string{"W1 xff= cookie= POST /p body=hello"}},
		{"chunked POST", "POST", []string{"POST /p HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n"}, []string{"W1 xff= cookie= POST /p body=hello"}},
	}
	for _, tc := range tests {
		c := dialHTTP(t, vs)
		_, bodies, err := c.do(tc.method, tc.reqs...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for i, b := range bodies {
			if !strings.HasPrefix(b, tc.want[i]) {
				t.Errorf("%s: response %d %q, want %q", tc.name, i, b, tc.want[i])
			}
		}
	}
}

// TestHTTPCloseAndTransformations: an HTTP/1.0 client is answered and
// closed, while OneConnect keeps the server connection for the next one.
func TestHTTPCloseAndTransformations(t *testing.T) {
	w1 := startHTTPMember(t, "127.0.121.51:0", "W1")
	vs := startVS(t, "127.0.121.53:0", httpConfig(httpPool(w1), true, HTTPOptions{Transformations: true}))
	for i := 0; i < 3; i++ {
		c := dialHTTP(t, vs)
		if _, err := io.WriteString(c.c, "GET /old HTTP/1.0\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(c.c) // ends only if the virtual closes
		if err != nil || !strings.Contains(string(all), "W1 xff= cookie= GET /old") {
			t.Fatalf("HTTP/1.0 answer %q %v", all, err)
		}
	}
	// On event loops a client prefers opening a connection on its own
	// loop to taking an idle one of another: one per loop (two in tests).
	want := int64(1)
	if onLoops {
		want = 2
	}
	if n := w1.conns.Load(); n > want {
		t.Errorf("member saw %d connections for three HTTP/1.0 clients, want at most %d (reused)", n, want)
	}
}

// TestHTTPBadRequest: garbage gets 400 and a close, not a member; a
// header block over max-header-size or max-header-count resets the
// client without an answer, as BIG-IP does.
func TestHTTPBadRequest(t *testing.T) {
	w1 := startHTTPMember(t, "127.0.121.61:0", "W1")
	vs := startVS(t, "127.0.121.63:0", httpConfig(httpPool(w1), false, HTTPOptions{MaxHeaderSize: 1024, MaxHeaderCount: 4}))
	for _, tc := range []struct {
		in    string
		reset bool
	}{
		{"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n", false},
		{get("/ok") + "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 2000) + "\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", true},
	} {
		c := dialHTTP(t, vs)
		io.WriteString(c.c, tc.in)
		all, err := io.ReadAll(c.c)
		if tc.reset {
			if !errors.Is(err, syscall.ECONNRESET) || len(all) != 0 {
				t.Errorf("answer to %q: %q %v, want a reset", tc.in[:10], all, err)
			}
			continue
		}
		if !strings.HasSuffix(string(all), badRequest) {
			t.Errorf("answer to %q: %q", tc.in[:10], all)
		}
	}
	if n := w1.reqs.Load(); n != 1 {
		t.Errorf("member saw %d requests, want only the valid one", n)
	}
}

// TestHTTPUpgradeTunnel: an upgrade answered 101 turns the client's
// connection into a tunnel to the member (after the answers owed before
// it), on goroutines and on event loops, with and without OneConnect; an
// upgrade answered otherwise leaves it HTTP.
func TestHTTPUpgradeTunnel(t *testing.T) {
	w1 := startHTTPMember(t, "127.0.121.71:0", "W1")
	for _, oc := range []bool{false, true} {
		vs := startVS(t, "127.0.121.73:0", httpConfig(httpPool(w1), oc, HTTPOptions{}))
		c := dialHTTP(t, vs)
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		up := "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"
		// A refused upgrade first (the member answers /refused 200).
		io.WriteString(c.c, strings.Replace(up, "/ws", "/refused", 1)+get("/after")+get("/before")+up+"ping\n")
		for _, want := range []string{"W1 xff= cookie= GET /refused", "W1 xff= cookie= GET /after", "W1 xff= cookie= GET /before"} {
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatalf("oneconnect %v: %v", oc, err)
			}
			b, _ := io.ReadAll(r.Body)
			if !strings.HasPrefix(string(b), want) {
				t.Fatalf("oneconnect %v: %q, want %q", oc, b, want)
			}
		}
		r, err := http.ReadResponse(c.br, nil)
		if err != nil || r.StatusCode != 101 {
			t.Fatalf("oneconnect %v: switch %v %v", oc, r, err)
		}
		if l, err := c.br.ReadString('\n'); l != "ping\n" {
			t.Fatalf("oneconnect %v: echo %q %v", oc, l, err)
		}
		big := strings.Repeat("y", 100<<10) + "\n"
		go io.WriteString(c.c, big)
		if l, err := c.br.ReadString('\n'); l != big {
			t.Fatalf("oneconnect %v: %d bytes echoed, want %d (%v)", oc, len(l), len(big), err)
		}
		c.c.(*net.TCPConn).CloseWrite()
		if rest, err := io.ReadAll(c.br); err != nil || len(rest) != 0 {
			t.Fatalf("oneconnect %v: after the client's close: %q %v", oc, rest, err)
		}
	}
}
