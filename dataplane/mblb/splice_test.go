package mblb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// spliceRule collects the first n bytes of a streamed body (requests, or
// responses when resp) and replaces them with repl, as a rule's
// `HTTP::collect n` then `HTTP::payload replace 0 n $repl` does. held is
// the most body it was shown, k what it replaced last.
type spliceRule struct {
	n    int
	repl []byte
	resp bool
	held atomic.Int64
	k    atomic.Int64
}

func (r *spliceRule) CollectsRequests() bool  { return !r.resp }
func (r *spliceRule) CollectsResponses() bool { return r.resp }

func (r *spliceRule) OnHTTPRequest(x *HTTPEvent) error {
	if !r.resp && x.Partial() {
		x.Await(r.n)
	}
	return nil
}

func (r *spliceRule) OnHTTPRequestData(x *HTTPEvent) error { return r.replace(x) }

func (r *spliceRule) OnHTTPResponse(x *HTTPEvent) error {
	if r.resp && x.Partial() {
		return r.replace(x)
	}
	return nil
}

func (r *spliceRule) replace(x *HTTPEvent) error {
	body := x.Body()
	r.held.Store(int64(len(body)))
	data := body
	if x.Head().Chunked {
		var err error
		if data, err = httpx.DechunkPrefix(nil, body, 0); err != nil {
			return err
		}
	}
	k := len(data)
	if r.n > 0 {
		k = min(k, r.n)
	}
	r.k.Store(int64(k))
	x.ReplaceStart(k, r.repl)
	return nil
}

// awaitSpliceRule is spliceRule for responses through HTTP_RESPONSE first
// (HTTPResponseDataHandler): the engine reads only what it asks before
// the DATA event.
type awaitSpliceRule struct{ *spliceRule }

func (r awaitSpliceRule) OnHTTPResponse(x *HTTPEvent) error {
	if x.Partial() {
		x.Await(r.n)
	}
	return nil
}

func (r awaitSpliceRule) OnHTTPResponseData(x *HTTPEvent) error { return r.replace(x) }

// TestHTTPSpliceUploads: a rule collects the start of an upload over the
// message limit and replaces it; the member gets the replacement, then
// the rest of the body unchanged, framed right (Content-Length adjusted,
// or chunked), and the connection carries the next request. Only what
// the rule asked is held before its DATA event.
func TestHTTPSpliceUploads(t *testing.T) {
	m := startUploadMember(t, "127.43.1.11:0", false)
	pool := uploadPool(m)
	big, _ := uploadBody(3 << 20)
	long := bytes.Repeat([]byte("L"), 300000)
	cases := []struct {
		name string
		enc  string // length, chunked
		n    int
		repl []byte
		size int // 0: 3 MiB
	}{
		{"length, just over the limit, all of it", "length", 0, []byte("whole"), 1 << 20},
		{"length, a few bytes", "length", 10, []byte("abc"), 0},
		{"length, longer", "length", 1000, long, 0},
		{"length, removed", "length", 50000, nil, 0},
		{"length, all held", "length", 0, []byte("whole"), 0},
		{"chunked, inside a chunk", "chunked", 10, []byte("abc"), 0},
		{"chunked, at a chunk's end", "chunked", 77777, []byte("xyz"), 0},
		{"chunked, across chunks, removed", "chunked", 200000, nil, 0},
		{"chunked, longer", "chunked", 1000, long, 0},
	}
	for _, oc := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("oneconnect=%v/%s", oc, tc.name), func(t *testing.T) {
				rule := &spliceRule{n: tc.n, repl: tc.repl}
				body := big
				if tc.size > 0 {
					body = big[:tc.size]
				}
				vs := startVS(t, "127.43.1.1:0", httpConfig(pool, oc, HTTPOptions{}), func(net.Conn) ClientOptions {
					return ClientOptions{HTTPRule: rule}
				})
				c, errc := sendUpload(t, vs, body, tc.enc, 77777)
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(r.Body)
				k := int(rule.k.Load())
				if tc.n > 0 && k != tc.n {
					t.Fatalf("the rule replaced %d bytes, want %d", k, tc.n)
				}
				t.Logf("replaced %d of %d bytes", k, len(body))
				want := append(append([]byte(nil), tc.repl...), body[k:]...)
				sum := sha256.Sum256(want)
				if exp := fmt.Sprintf("n=%d sha=%s", len(want), hex.EncodeToString(sum[:])); string(got) != exp {
					t.Fatalf("member saw %q, want %q (k=%d)", got, exp, k)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				// The client writes the whole chunked request at once: the
				// engine reads as much of it as the socket holds (up to
				// the message limit) before it knows the body is large;
				// a Content-Length one is held no further than asked.
				if tc.enc == "length" && tc.n > 0 && tc.n < 64<<10 && rule.held.Load() >= 512<<10 {
					t.Errorf("collecting %d bytes held %d before the DATA event", tc.n, rule.held.Load())
				}
				smallPostAnswered(t, c, "next request")
			})
		}
	}
}

// TestHTTPSpliceResponses: the same for a large response: the rule's
// replacement of its collected start reaches the client with the rest
// of the body after it, with a Content-Length, chunked, or ending at the
// close; a rule that asks in HTTP_RESPONSE (await) is shown no more of
// a Content-Length body than it asked.
func TestHTTPSpliceResponses(t *testing.T) {
	m := startBigMember(t, "127.43.2.11:0")
	const size = 3 << 20
	cases := []struct {
		name, mode string
		n          int
		repl       []byte
	}{
		{"length, a few bytes", "cl", 10, []byte("abc")},
		{"length, longer", "cl", 100, bytes.Repeat([]byte("L"), 100000)},
		{"length, removed", "cl", 70000, nil},
		{"chunked", "chunked", 40000, []byte("xyz")},
		{"chunked, removed", "chunked", 32 << 10, nil},
		{"close", "close", 10, []byte("abc")},
		{"length, just over the limit, all of it", "cl", 0, []byte("whole")},
	}
	for _, run := range []struct {
		oc, await bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		oc := run.oc
		for _, tc := range cases {
			t.Run(fmt.Sprintf("oneconnect=%v/await=%v/%s", oc, run.await, tc.name), func(t *testing.T) {
				rule := &spliceRule{n: tc.n, repl: tc.repl, resp: true}
				var hr HTTPRuleHandler = rule
				if run.await {
					hr = awaitSpliceRule{rule}
				}
				vs := startVS(t, "127.43.2.1:0", httpConfig(httpPool(m), oc, HTTPOptions{}), func(net.Conn) ClientOptions {
					return ClientOptions{HTTPRule: hr}
				})
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(20 * time.Second))
				size := size
				if tc.n == 0 {
					size = 1 << 20
				}
				path := fmt.Sprintf("/big/%s/%d", tc.mode, size)
				if _, err := io.WriteString(c.c, get(path)); err != nil {
					t.Fatal(err)
				}
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				k := int(rule.k.Load())
				if tc.n > 0 && k != tc.n {
					t.Fatalf("the rule replaced %d bytes, want %d", k, tc.n)
				}
				t.Logf("replaced %d of %d bytes", k, size)
				if !bytes.HasPrefix(got, tc.repl) {
					t.Fatalf("the body does not start with the replacement")
				}
				if run.await && tc.mode == "cl" && tc.n > 0 && tc.n < 64<<10 && rule.held.Load() >= 512<<10 {
					t.Errorf("collecting %d bytes held %d before the DATA event", tc.n, rule.held.Load())
				}
				rest := got[len(tc.repl):]
				if len(rest) != size-k {
					t.Fatalf("%d bytes after the replacement, want %d", len(rest), size-k)
				}
				for i, b := range rest {
					if b != bigByte(k+i) {
						t.Fatalf("byte %d after the replacement is %#x, want %#x", i, b, bigByte(k+i))
					}
				}
				if tc.mode == "close" {
					return
				}
				_, bodies, err := c.do("GET", get("/big/cl/5"))
				if err != nil || len(bodies) != 1 || len(bodies[0]) != 5 {
					t.Fatalf("next request: %q %v", bodies, err)
				}
			})
		}
	}
}

// TestHTTPSpliceWholeBody: a body just over the message limit can be all
// in when the rules collect it; replacing all of it ends the body there
// (the stream has nothing left to pass on), and the connection carries
// the next message.
func TestHTTPSpliceWholeBody(t *testing.T) {
	m := startUploadMember(t, "127.43.5.11:0", false)
	pool := uploadPool(m)
	// A member that sends its head, then a 1,010-byte body a moment
	// later: the response streams (it is over the 1,000-byte limit) and
	// the body arrives whole while its rules wait for it; each response
	// of the connection is replaced whole.
	ln, err := net.Listen("tcp", "127.43.5.12:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serveRequests(ln, nil, func(c net.Conn, r *http.Request) bool {
		io.Copy(io.Discard, r.Body)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1010\r\n\r\n")
		time.Sleep(50 * time.Millisecond)
		c.Write(bytes.Repeat([]byte("r"), 1010))
		return true
	})
	slow := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	slow.members = append(slow.members, Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Pool: "/Common/slow", Name: "SLOW"})
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v/request", oc), func(t *testing.T) {
			rule := &spliceRule{repl: []byte("whole")}
			cfg := httpConfig(pool, oc, HTTPOptions{})
			cfg.MaxMessageSize = 1000
			vs := startVS(t, "127.43.5.1:0", cfg, func(net.Conn) ClientOptions { return ClientOptions{HTTPRule: rule} })
			c := dialHTTP(t, vs)
			c.c.SetDeadline(time.Now().Add(10 * time.Second))
			body := bytes.Repeat([]byte("b"), 1010)
			sum := sha256.Sum256([]byte("whole"))
			_, bodies, err := c.do("POST", fmt.Sprintf("POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n%s", len(body), body),
				"POST /small HTTP/1.1\r\nHost: www\r\nContent-Length: 3\r\n\r\nabc")
			if err != nil || len(bodies) != 2 || bodies[0] != "n=5 sha="+hex.EncodeToString(sum[:]) || !strings.HasPrefix(bodies[1], "n=3 ") {
				t.Fatalf("answers %q %v (replaced %d)", bodies, err, rule.k.Load())
			}
			if k := rule.k.Load(); k != int64(len(body)) {
				t.Fatalf("the rule was shown %d bytes, want all %d", k, len(body))
			}
		})
		t.Run(fmt.Sprintf("oneconnect=%v/response", oc), func(t *testing.T) {
			rule := &spliceRule{repl: []byte("whole"), resp: true}
			cfg := httpConfig(slow, oc, HTTPOptions{})
			cfg.MaxMessageSize = 1000
			vs := startVS(t, "127.43.5.2:0", cfg, func(net.Conn) ClientOptions { return ClientOptions{HTTPRule: awaitSpliceRule{rule}} })
			c := dialHTTP(t, vs)
			c.c.SetDeadline(time.Now().Add(10 * time.Second))
			_, bodies, err := c.do("GET", get("/1"), get("/2"))
			if err == nil && rule.k.Load() == 0 && len(bodies) > 0 && len(bodies[0]) == 1010 {
				t.Skip("the member's head and body arrived in one read: the response was not streamed")
			}
			if err != nil || len(bodies) != 2 || bodies[0] != "whole" || bodies[1] != "whole" {
				t.Fatalf("answers %q %v (replaced %d)", bodies, err, rule.k.Load())
			}
		})
	}
}
