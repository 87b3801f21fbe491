package mblb

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpcache"
)

// TestHTTPCache: a web-acceleration cache answers a repeated GET (and a
// HEAD) from memory, in order among pipelined answers, with its Age and
// a Content-Length (a chunked page too), and no member sees it; a client
// asking for a fresh copy, and an answer that sets a cookie, go to the
// member.
func TestHTTPCache(t *testing.T) {
	m := startPageMember(t, "127.0.143.11:0")
	for _, oc := range []bool{false, true} {
		c, err := httpcache.New(httpcache.Config{Profile: "/Common/wa", Size: 1 << 20, MaxEntries: 100, MaxAge: time.Hour, MinObject: 100, MaxObject: 1 << 20, InsertAge: true, HonorClient: true})
		if err != nil {
			t.Fatal(err)
		}
		vs := startVS(t, "127.0.143.1:0", httpConfig(httpPool(m), oc, HTTPOptions{Cache: c}))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		ask := func(req, method, wantBody string, member bool) *http.Response {
			t.Helper()
			before := m.reqs.Load()
			io.WriteString(hc.c, req)
			r, body := readDecoded(t, hc.br, method)
			if r.StatusCode != 200 || body != wantBody {
				t.Fatalf("oneconnect=%v %q: %d %.60q", oc, req, r.StatusCode, body)
			}
			if got := m.reqs.Load() != before; got != member {
				t.Fatalf("oneconnect=%v %q: the member saw it: %v, want %v", oc, req, got, member)
			}
			return r
		}
		page := pageText(30)
		ask(get("/page/cl/30"), "GET", page, true)
		r := ask(get("/page/cl/30"), "GET", page, false)
		if r.Header.Get("Age") == "" || r.ContentLength != int64(len(page)) {
			t.Errorf("oneconnect=%v: a hit's Age %q, length %d", oc, r.Header.Get("Age"), r.ContentLength)
		}
		ask("HEAD /page/cl/30 HTTP/1.1\r\nHost: www\r\n\r\n", "HEAD", "", false)
		ask(get("/page/cl/30", "Cache-Control: no-cache\r\n"), "GET", page, true)
		ask(get("/page/chunked/30"), "GET", page, true)
		r = ask(get("/page/chunked/30"), "GET", page, false)
		if len(r.TransferEncoding) != 0 || r.ContentLength != int64(len(page)) {
			t.Errorf("oneconnect=%v: a chunked page's hit: %v %d", oc, r.TransferEncoding, r.ContentLength)
		}
		ask(get("/setcookie"), "GET", `cookie=[]`, true)
		ask(get("/setcookie"), "GET", `cookie=[]`, true)
		// Pipelined: a miss, a hit, a miss, answered in order.
		before := m.reqs.Load()
		io.WriteString(hc.c, get("/page/cl/3")+get("/page/cl/30")+get("/page/cl/4"))
		for _, want := range []string{pageText(3), page, pageText(4)} {
			if _, body := readDecoded(t, hc.br, "GET"); body != want {
				t.Fatalf("oneconnect=%v: pipelined answer %.60q, want %.60q", oc, body, want)
			}
		}
		if n := m.reqs.Load() - before; n != 2 {
			t.Errorf("oneconnect=%v: the member saw %d of the pipelined requests, want 2", oc, n)
		}
		if st := c.Stats(); st.Hits < 4 || st.Entries < 2 {
			t.Errorf("oneconnect=%v: stats %+v", oc, st)
		}
		if !strings.Contains(page, "item 29") {
			t.Fatal("pageText changed")
		}
	}
}

// TestHTTPCacheHitEdits: a hit leaves with the http profile's edits of
// every answer, as a miss does (hsts, via-response, the fields
// response-headers-permitted keeps); a virtual with a stream profile does
// not cache.
func TestHTTPCacheHitEdits(t *testing.T) {
	m := startPageMember(t, "127.0.143.21:0")
	newCache := func() *httpcache.Cache {
		c, err := httpcache.New(httpcache.Config{Profile: "/Common/wa", Size: 1 << 20, MaxEntries: 100, MaxAge: time.Hour, MinObject: 100, MaxObject: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	opts := HTTPOptions{
		Cache:          newCache(),
		HSTS:           []byte("Strict-Transport-Security: max-age=300\r\n"),
		ResponseVia:    []byte("Via: 1.1 edge1\r\n"),
		ResponseFields: &ResponseFields{Permitted: map[string]bool{"content-type": true}},
	}
	vs := startVS(t, "127.0.143.2:0", httpConfig(httpPool(m), false, opts))
	hc := dialHTTP(t, vs)
	hc.c.SetDeadline(time.Now().Add(10 * time.Second))
	for i, member := range []bool{true, false} {
		before := m.reqs.Load()
		io.WriteString(hc.c, get("/page/cl/30"))
		r, body := readDecoded(t, hc.br, "GET")
		if body != pageText(30) || (m.reqs.Load() != before) != member {
			t.Fatalf("answer %d: member %v, body %.40q", i, m.reqs.Load() != before, body)
		}
		if r.Header.Get("Strict-Transport-Security") != "max-age=300" || r.Header.Get("Via") != "1.1 edge1" || r.Header.Get("Date") != "" || r.Header.Get("Content-Type") == "" {
			t.Errorf("answer %d (hit %v): fields %v", i, !member, r.Header)
		}
	}
	stream := HTTPOptions{Cache: newCache(), Stream: &StreamOptions{Profile: "/Common/stream"}}
	vs = startVS(t, "127.0.143.3:0", httpConfig(httpPool(m), false, stream))
	hc = dialHTTP(t, vs)
	hc.c.SetDeadline(time.Now().Add(10 * time.Second))
	before := m.reqs.Load()
	for range 2 {
		io.WriteString(hc.c, get("/page/cl/30"))
		readDecoded(t, hc.br, "GET")
	}
	if n := m.reqs.Load() - before; n != 2 {
		t.Errorf("with a stream profile the member saw %d of 2 requests", n)
	}
}

// TestHTTPCacheIncludeOverride: an answer its member marks no-store is
// served from the cache when its URI is in cache-uri-include-override,
// and fetched from the member each time when it is not; exclude still
// wins.
func TestHTTPCacheIncludeOverride(t *testing.T) {
	m := startHexMember(t, "127.63.13.11:0")
	c, err := httpcache.New(httpcache.Config{
		Profile: "/Common/wa", Size: 1 << 20, MaxEntries: 100, MaxAge: time.Hour, MinObject: 100, MaxObject: 1 << 20,
		URIInclude: []string{`^/none$`}, URIOverride: []string{`^/nostore/app/`}, URIExclude: []string{`/private/`},
	})
	if err != nil {
		t.Fatal(err)
	}
	vs := startVS(t, "127.63.13.1:0", httpConfig(httpPool(m), false, HTTPOptions{Cache: c}))
	hc := dialHTTP(t, vs)
	hc.c.SetDeadline(time.Now().Add(10 * time.Second))
	for _, tc := range []struct {
		path   string
		member int64 // of the 3 requests, those the member saw
	}{
		{"/nostore/app/500", 1},
		{"/nostore/other/500", 3},
		{"/nostore/app/private/500", 3},
		{"/cl/500", 3}, // not included at all
	} {
		before := m.reqs.Load()
		for range 3 {
			io.WriteString(hc.c, get(tc.path))
			if r, body := readDecoded(t, hc.br, "GET"); r.StatusCode != 200 || body != hexText(500) {
				t.Fatalf("%s: %d %.40q", tc.path, r.StatusCode, body)
			}
		}
		if n := m.reqs.Load() - before; n != tc.member {
			t.Errorf("%s: the member saw %d of 3 requests, want %d", tc.path, n, tc.member)
		}
	}
}
