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
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	pool.members = append(pool.members, Member{ID: 1, Addr: rawsock.AddrPortOf(m.ln.Addr()), Pool: "/Common/up", Name: "UP"})
	body, _ := uploadBody(3 << 20)
	long := bytes.Repeat([]byte("L"), 300000)
	cases := []struct {
		name string
		enc  string // length, chunked
		n    int
		repl []byte
	}{
		{"length, a few bytes", "length", 10, []byte("abc")},
		{"length, longer", "length", 1000, long},
		{"length, removed", "length", 50000, nil},
		{"length, all held", "length", 0, []byte("whole")},
		{"chunked, inside a chunk", "chunked", 10, []byte("abc")},
		{"chunked, at a chunk's end", "chunked", 77777, []byte("xyz")},
		{"chunked, across chunks, removed", "chunked", 200000, nil},
		{"chunked, longer", "chunked", 1000, long},
	}
	for _, oc := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("oneconnect=%v/%s", oc, tc.name), func(t *testing.T) {
				rule := &spliceRule{n: tc.n, repl: tc.repl}
				vs := startVS(t, "127.43.1.1:0", httpConfig(pool, oc, HTTPOptions{}), func(net.Conn) ClientOptions {
					return ClientOptions{HTTPRule: rule}
				})
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(20 * time.Second))
				var req []byte
				if tc.enc == "length" {
					req = fmt.Appendf(nil, "POST /up HTTP/1.1\r\nHost: www\r\nContent-Length: %d\r\n\r\n", len(body))
					req = append(req, body...)
				} else {
					req = append([]byte("POST /up HTTP/1.1\r\nHost: www\r\nTransfer-Encoding: chunked\r\n\r\n"), chunked(body, 77777)...)
				}
				errc := make(chan error, 1)
				go func() { _, err := c.c.Write(req); errc <- err }()
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(r.Body)
				k := int(rule.k.Load())
				if tc.n > 0 && k != tc.n {
					t.Fatalf("the rule replaced %d bytes, want %d", k, tc.n)
				}
				want := append(append([]byte(nil), tc.repl...), body[k:]...)
				sum := sha256.Sum256(want)
				if exp := fmt.Sprintf("n=%d sha=%s", len(want), hex.EncodeToString(sum[:])); string(got) != exp {
					t.Fatalf("member saw %q, want %q (k=%d)", got, exp, k)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				// A chunked request is known to be large only once the
				// message limit of it is in: only a Content-Length one is
				// held no further than asked.
				if tc.enc == "length" && tc.n > 0 && tc.n < 64<<10 && rule.held.Load() >= 512<<10 {
					t.Errorf("collecting %d bytes held %d before the DATA event", tc.n, rule.held.Load())
				}
				_, bodies, err := c.do("POST", "POST /small HTTP/1.1\r\nHost: www\r\nContent-Length: 3\r\n\r\nabc")
				if err != nil || len(bodies) != 1 || !strings.HasPrefix(bodies[0], "n=3 ") {
					t.Fatalf("next request: %q %v", bodies, err)
				}
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
				if k != tc.n {
					t.Fatalf("the rule replaced %d bytes, want %d", k, tc.n)
				}
				if !bytes.HasPrefix(got, tc.repl) {
					t.Fatalf("the body does not start with the replacement")
				}
				if run.await && tc.mode == "cl" && tc.n < 64<<10 && rule.held.Load() >= 512<<10 {
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
