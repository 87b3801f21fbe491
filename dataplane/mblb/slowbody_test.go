package mblb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// A body that has not all come when its head is in streams at once: the
// member gets the head and the first part while the client still holds
// the rest, and the rules' events run before the body ends. Waits are
// bounded by wait (a failure, never a measure).
const wait = 10 * time.Second

// recv is the next value of ch, or a test failure after wait.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("%s: nothing after %v", what, wait)
	}
	var zero T
	return zero
}

// slowMember reads each request's head, then its body as it comes,
// reporting each part it reads on parts before reading on; it answers
// "n=<body bytes>" once the body ends.
type slowMember struct {
	ln    net.Listener
	parts chan string
}

func startSlowMember(t *testing.T, addr string) *slowMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &slowMember{ln: ln, parts: make(chan string, 64)}
	serveRequests(ln, nil, func(c net.Conn, r *http.Request) bool {
		m.parts <- "head " + r.URL.Path
		buf := make([]byte, 64<<10)
		n := 0
		for {
			k, err := r.Body.Read(buf)
			if k > 0 {
				n += k
				m.parts <- string(buf[:k])
			}
			if err != nil {
				break
			}
		}
		out := fmt.Sprintf("n=%d", n)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(out), out)
		return true
	})
	t.Cleanup(func() { ln.Close() })
	return m
}

func slowPool(m *slowMember) *testPool {
	p := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	p.members = append(p.members, Member{ID: 1, Addr: rawsock.AddrPortOf(m.ln.Addr()), Pool: "/Common/slow", Name: "SLOW"})
	return p
}

// eventRule reports HTTP_REQUEST and HTTP_RESPONSE as they run, and
// collects collect bytes of a streamed request when collect > 0: its
// HTTP_REQUEST_DATA reports how many body bytes (de-chunked) it was
// shown.
type eventRule struct {
	collect int
	events  chan string
}

func (r *eventRule) CollectsRequests() bool { return r.collect > 0 }

func (r *eventRule) OnHTTPRequest(x *HTTPEvent) error {
	r.events <- fmt.Sprintf("HTTP_REQUEST partial=%v", x.Partial())
	if r.collect > 0 && x.Partial() {
		x.Await(r.collect)
	}
	return nil
}

func (r *eventRule) OnHTTPRequestData(x *HTTPEvent) error {
	n := len(x.Body())
	if x.Head().Chunked {
		n = httpx.ChunkedDataLen(x.Body())
	}
	r.events <- fmt.Sprintf("HTTP_REQUEST_DATA %d", n)
	return nil
}

func (r *eventRule) OnHTTPResponse(x *HTTPEvent) error {
	r.events <- fmt.Sprintf("HTTP_RESPONSE partial=%v", x.Partial())
	return nil
}

// TestHTTPSlowUploadStreams: a client sends a request's head and the
// first part of its body, then waits. The member gets both and
// HTTP_REQUEST has run before the client sends the rest; then the rest
// follows and the answer counts the whole body. Chunked and with a
// Content-Length, with and without OneConnect; the connection carries
// a small request after it.
func TestHTTPSlowUploadStreams(t *testing.T) {
	m := startSlowMember(t, "127.44.1.11:0")
	cases := []struct {
		name, head, first, rest string
		n                       int
	}{
		{"chunked", "POST /up HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n",
			"5\r\nhello\r\n", "6\r\n world\r\n0\r\n\r\n", 11},
		{"length", "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: 11\r\n\r\n",
			"hello", " world", 11},
		{"100-continue", "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n",
			"", "hello world", 11},
	}
	for _, oc := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("oneconnect=%v/%s", oc, tc.name), func(t *testing.T) {
				rule := &eventRule{events: make(chan string, 16)}
				vs := startVS(t, "127.44.1.1:0", httpConfig(slowPool(m), oc, HTTPOptions{}), func(net.Conn) ClientOptions {
					return ClientOptions{HTTPRule: rule}
				})
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(2 * wait))
				if _, err := io.WriteString(c.c, tc.head+tc.first); err != nil {
					t.Fatal(err)
				}
				if ev := recv(t, rule.events, "HTTP_REQUEST"); ev != "HTTP_REQUEST partial=true" {
					t.Fatalf("first event %q, want HTTP_REQUEST of a streamed request", ev)
				}
				if p := recv(t, m.parts, "the head at the member"); p != "head /up" {
					t.Fatalf("member got %q, want the head", p)
				}
				if tc.first != "" {
					if p := recv(t, m.parts, "the first part at the member"); p != "hello" {
						t.Fatalf("member got %q, want the first part", p)
					}
				} else {
					// The proxy answers Expect: 100-continue itself.
					if l, err := c.br.ReadString('\n'); err != nil || l != "HTTP/1.1 100 Continue\r\n" {
						t.Fatalf("interim answer %q %v", l, err)
					}
					if l, err := c.br.ReadString('\n'); err != nil || l != "\r\n" {
						t.Fatalf("interim answer's end %q %v", l, err)
					}
				}
				if _, err := io.WriteString(c.c, tc.rest); err != nil {
					t.Fatal(err)
				}
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r.Body)
				if want := fmt.Sprintf("n=%d", tc.n); string(b) != want {
					t.Fatalf("answer %q, want %q", b, want)
				}
				if ev := recv(t, rule.events, "HTTP_RESPONSE"); ev != "HTTP_RESPONSE partial=false" {
					t.Fatalf("event %q, want HTTP_RESPONSE", ev)
				}
				for len(m.parts) > 0 {
					<-m.parts
				}
				_, bodies, err := c.do("POST", "POST /small HTTP/1.1\r\nHost: www\r\nContent-Length: 3\r\n\r\nabc")
				if err != nil || len(bodies) != 1 || bodies[0] != "n=3" {
					t.Fatalf("next request: %q %v", bodies, err)
				}
				for len(m.parts) > 0 {
					<-m.parts
				}
			})
		}
	}
}

// TestHTTPSlowUploadCollect: HTTP::collect 10 in HTTP_REQUEST of a
// chunked request whose body comes slowly: HTTP_REQUEST runs with the
// head alone, HTTP_REQUEST_DATA once 10 bytes are in (and not with the
// 4 that came first), the member gets what was collected before the
// client ends the body, and the rest follows. A body that ends short of
// what is collected gets its DATA event at its end.
func TestHTTPSlowUploadCollect(t *testing.T) {
	m := startSlowMember(t, "127.44.2.11:0")
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			rule := &eventRule{collect: 10, events: make(chan string, 16)}
			vs := startVS(t, "127.44.2.1:0", httpConfig(slowPool(m), oc, HTTPOptions{}), func(net.Conn) ClientOptions {
				return ClientOptions{HTTPRule: rule}
			})
			c := dialHTTP(t, vs)
			c.c.SetDeadline(time.Now().Add(2 * wait))
			io.WriteString(c.c, "POST /c HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n")
			if ev := recv(t, rule.events, "HTTP_REQUEST"); ev != "HTTP_REQUEST partial=true" {
				t.Fatalf("first event %q", ev)
			}
			io.WriteString(c.c, "8\r\nefghijkl\r\n")
			if ev := recv(t, rule.events, "HTTP_REQUEST_DATA"); ev != "HTTP_REQUEST_DATA 12" {
				t.Fatalf("event %q, want HTTP_REQUEST_DATA over the 12 bytes in", ev)
			}
			if p := recv(t, m.parts, "the head at the member"); p != "head /c" {
				t.Fatalf("member got %q, want the head", p)
			}
			got := ""
			for len(got) < 12 {
				got += recv(t, m.parts, "the collected part at the member")
			}
			if got != "abcdefghijkl" {
				t.Fatalf("member got %q before the body's end", got)
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
			recv(t, rule.events, "HTTP_RESPONSE")
			for len(m.parts) > 0 {
				<-m.parts
			}

			// A body shorter than the collect: DATA at its end.
			io.WriteString(c.c, "POST /s HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
			if ev := recv(t, rule.events, "HTTP_REQUEST"); ev != "HTTP_REQUEST partial=true" {
				t.Fatalf("event %q", ev)
			}
			io.WriteString(c.c, "0\r\n\r\n")
			if ev := recv(t, rule.events, "HTTP_REQUEST_DATA"); ev != "HTTP_REQUEST_DATA 3" {
				t.Fatalf("event %q, want HTTP_REQUEST_DATA over the whole 3-byte body", ev)
			}
			r, err = http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(r.Body)
			if string(b) != "n=3" {
				t.Fatalf("answer %q, want n=3", b)
			}
			recv(t, rule.events, "HTTP_RESPONSE")
			for len(m.parts) > 0 {
				<-m.parts
			}
		})
	}
}

// TestHTTPSlowResponseStreams: a member that sends its answer chunk by
// chunk, waiting for the test between chunks: the client reads the head
// and each chunk before the next is sent, and HTTP_RESPONSE has run
// before the body ends. Chunked, with a Content-Length, and up to the
// member's close.
func TestHTTPSlowResponseStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.44.3.11:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	next := make(chan struct{}, 8)
	var accepted atomic.Int64
	serveRequests(ln, &accepted, func(c net.Conn, r *http.Request) bool {
		io.Copy(io.Discard, r.Body)
		var head string
		var parts []string
		switch r.URL.Path {
		case "/chunked":
			head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			parts = []string{"5\r\nfirst\r\n", "6\r\nsecond\r\n", "5\r\nthird\r\n0\r\n\r\n"}
		case "/length":
			head = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n"
			parts = []string{"first", "second", "third"}
		case "/close":
			head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
			parts = []string{"first", "second", "third"}
		}
		c.Write([]byte(head + parts[0]))
		for _, p := range parts[1:] {
			select {
			case <-next:
			case <-time.After(wait):
				return false
			}
			c.Write([]byte(p))
		}
		return r.URL.Path != "/close"
	})
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	pool.members = append(pool.members, Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Pool: "/Common/dl", Name: "DL"})
	for _, oc := range []bool{false, true} {
		for _, path := range []string{"/chunked", "/length", "/close"} {
			t.Run(fmt.Sprintf("oneconnect=%v%s", oc, path), func(t *testing.T) {
				rule := &eventRule{events: make(chan string, 16)}
				vs := startVS(t, "127.44.3.1:0", httpConfig(pool, oc, HTTPOptions{}), func(net.Conn) ClientOptions {
					return ClientOptions{HTTPRule: rule}
				})
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(2 * wait))
				io.WriteString(c.c, get(path))
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				recv(t, rule.events, "HTTP_REQUEST")
				if ev := recv(t, rule.events, "HTTP_RESPONSE"); ev != "HTTP_RESPONSE partial=true" {
					t.Fatalf("event %q, want HTTP_RESPONSE of a streamed response", ev)
				}
				buf := make([]byte, 64)
				for i, want := range []string{"first", "second", "third"} {
					got := ""
					for len(got) < len(want) {
						k, err := r.Body.Read(buf[:len(want)-len(got)])
						got += string(buf[:k])
						if err != nil && len(got) < len(want) {
							t.Fatalf("part %d: %q, %v", i, got, err)
						}
					}
					if got != want {
						t.Fatalf("part %d: %q, want %q", i, got, want)
					}
					if i < 2 {
						next <- struct{}{} // only now does the member send on
					}
				}
				if rest, err := io.ReadAll(r.Body); err != nil || len(rest) != 0 {
					t.Fatalf("after the body: %q %v", rest, err)
				}
				if path == "/close" {
					return
				}
				io.WriteString(c.c, get("/length"))
				r, err = http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				next <- struct{}{}
				next <- struct{}{}
				if b, err := io.ReadAll(r.Body); err != nil || string(b) != "firstsecondthird" {
					t.Fatalf("next response %q %v", b, err)
				}
			})
		}
	}
	if accepted.Load() == 0 {
		t.Fatal("the member saw no connection")
	}
}

// TestHTTPPipelinedWithSlowBody: small pipelined requests still go
// whole and are answered in order, also when the last one's body
// arrives later than its head.
func TestHTTPPipelinedWithSlowBody(t *testing.T) {
	m := startSlowMember(t, "127.44.4.11:0")
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			vs := startVS(t, "127.44.4.1:0", httpConfig(slowPool(m), oc, HTTPOptions{}))
			c := dialHTTP(t, vs)
			c.c.SetDeadline(time.Now().Add(2 * wait))
			small := func(path, body string) string {
				return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
			}
			io.WriteString(c.c, small("/1", "a")+small("/2", "bb")+get("/3")+
				"POST /4 HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n2\r\ncc\r\n")
			for got := ""; !strings.Contains(got, "head /4"); {
				got += recv(t, m.parts, "request 4's head at the member") + " "
			}
			io.WriteString(c.c, "0\r\n\r\n"+small("/5", "eeeee"))
			for i, want := range []string{"n=1", "n=2", "n=0", "n=2", "n=5"} {
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatalf("answer %d: %v", i+1, err)
				}
				b, _ := io.ReadAll(r.Body)
				if string(b) != want {
					t.Fatalf("answer %d %q, want %q", i+1, b, want)
				}
			}
			for len(m.parts) > 0 {
				<-m.parts
			}
		})
	}
}

// respCollectRule runs HTTP::collect n in HTTP_RESPONSE of a streamed
// response and reports HTTP_RESPONSE_DATA with the bytes (de-chunked)
// it was shown; it replaces them with repl when set.
type respCollectRule struct {
	n      int
	repl   []byte
	events chan string
}

func (r *respCollectRule) CollectsResponses() bool          { return true }
func (r *respCollectRule) OnHTTPRequest(x *HTTPEvent) error { return nil }

func (r *respCollectRule) OnHTTPResponse(x *HTTPEvent) error {
	r.events <- fmt.Sprintf("HTTP_RESPONSE partial=%v", x.Partial())
	if x.Partial() {
		x.Await(r.n)
	}
	return nil
}

func (r *respCollectRule) OnHTTPResponseData(x *HTTPEvent) error {
	data := x.Body()
	if x.Head().Chunked {
		data, _ = httpx.DechunkPrefix(nil, data, 0)
	}
	r.events <- fmt.Sprintf("HTTP_RESPONSE_DATA %q", data)
	if r.repl != nil {
		x.ReplaceStart(len(data), r.repl)
	}
	return nil
}

// TestHTTPSlowResponseCollect: HTTP::collect 100 in HTTP_RESPONSE of a
// response whose body is shorter and comes after its head: the DATA
// event runs when the body ends (chunked: its last chunk; up to the
// close: the member's close) with all of it, and its replacement
// reaches the client.
func TestHTTPSlowResponseCollect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.44.5.11:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	next := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				head, first, last := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "3\r\nabc\r\n", "0\r\n\r\n"
				if r.URL.Path == "/close" {
					head, first, last = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", "abc", ""
				}
				c.Write([]byte(head + first))
				select {
				case <-next:
				case <-time.After(wait):
					return
				}
				c.Write([]byte(last))
			}(c)
		}
	}()
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	pool.members = append(pool.members, Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Pool: "/Common/dl", Name: "DL"})
	for _, path := range []string{"/chunked", "/close"} {
		t.Run(path[1:], func(t *testing.T) {
			rule := &respCollectRule{n: 100, repl: []byte("replaced"), events: make(chan string, 4)}
			vs := startVS(t, "127.44.5.1:0", httpConfig(pool, false, HTTPOptions{}), func(net.Conn) ClientOptions {
				return ClientOptions{HTTPRule: rule}
			})
			c := dialHTTP(t, vs)
			c.c.SetDeadline(time.Now().Add(2 * wait))
			io.WriteString(c.c, get(path))
			if ev := recv(t, rule.events, "HTTP_RESPONSE"); ev != "HTTP_RESPONSE partial=true" {
				t.Fatalf("event %s, want HTTP_RESPONSE of a streamed response", ev)
			}
			next <- struct{}{} // only now does the member end the body
			if ev := recv(t, rule.events, "HTTP_RESPONSE_DATA"); ev != `HTTP_RESPONSE_DATA "abc"` {
				t.Fatalf("event %s, want the whole body", ev)
			}
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := io.ReadAll(r.Body); err != nil || string(b) != "replaced" {
				t.Fatalf("body %q %v", b, err)
			}
		})
	}
}

// TestHTTPSlowUploadFillsBuffer: a request whose head and first part
// fill the read buffer exactly streams too: on event loops the read
// after it finds the socket empty; on goroutines a peek does.
func TestHTTPSlowUploadFillsBuffer(t *testing.T) {
	m := startSlowMember(t, "127.44.6.11:0")
	vs := startVS(t, "127.44.6.1:0", httpConfig(slowPool(m), false, HTTPOptions{}))
	c := dialHTTP(t, vs)
	c.c.SetDeadline(time.Now().Add(2 * wait))
	head := "POST /fill HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n"
	size := readSize - len(head) - len("7fff\r\n\r\n")
	first := fmt.Sprintf("%x\r\n%s\r\n", size, strings.Repeat("f", size))
	if len(head)+len(first) != readSize {
		t.Fatalf("head and first chunk are %d bytes, want %d", len(head)+len(first), readSize)
	}
	io.WriteString(c.c, head+first)
	if p := recv(t, m.parts, "the head at the member"); p != "head /fill" {
		t.Fatalf("member got %q, want the head", p)
	}
	for got := 0; got < size; {
		got += len(recv(t, m.parts, "the first chunk at the member"))
	}
	io.WriteString(c.c, "0\r\n\r\n")
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != fmt.Sprintf("n=%d", size) {
		t.Fatalf("answer %q", b)
	}
}

// serveRequests accepts on ln until it is closed and reads each
// connection's requests in turn, calling handle for each (it answers on
// c); a connection ends when handle returns false or a request cannot
// be read. accepted, when not nil, counts the connections.
func serveRequests(ln net.Listener, accepted *atomic.Int64, handle func(c net.Conn, r *http.Request) bool) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted != nil {
				accepted.Add(1)
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil || !handle(c, r) {
						return
					}
				}
			}(c)
		}
	}()
}
