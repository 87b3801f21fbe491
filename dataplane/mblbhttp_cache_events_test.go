package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpcache"
	"github.com/openltm/openltm/dataplane/mblb"
)

// countingMember answers each path with how many times it was asked for
// it ("n=3 /a"), cacheable for a minute; /nostore's answer carries
// X-No-Store, for CACHE_UPDATE to read.
func countingMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	asked := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		asked[r.URL.Path]++
		n := asked[r.URL.Path]
		mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=60")
		if r.URL.Path == "/nostore" {
			w.Header().Set("X-No-Store", "1")
		}
		fmt.Fprintf(w, "n=%d %s", n, r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestHTTPCacheEvents: CACHE_REQUEST, CACHE_RESPONSE and CACHE_UPDATE on
// a virtual with a web-acceleration profile: a hit gets the rules' header
// edits and reads its age and hits, CACHE::disable and CACHE::expire in
// CACHE_REQUEST send the request to the member, CACHE_UPDATE keeps an
// answer from the cache, CACHE::useragent keys by browser, and
// HTTP::respond and reject in CACHE_RESPONSE replace the answer and end
// the client.
func TestHTTPCacheEvents(t *testing.T) {
	countingMember(t, "127.0.237.31:80")
	rule := `
when HTTP_REQUEST {
    if { [HTTP::path] eq "/ua" } { CACHE::useragent }
}
when CACHE_REQUEST {
    if { [HTTP::path] eq "/skip" } { CACHE::disable }
    if { [HTTP::header exists X-Expire] } { CACHE::expire }
}
when CACHE_RESPONSE {
    HTTP::header insert X-Cache HIT
    HTTP::header insert X-Hits [CACHE::hits]
    log local0. "[HTTP::path] age=[CACHE::age] hits=[CACHE::hits] fresh=[CACHE::fresh] length=[CACHE::payload length]"
    switch [HTTP::path] {
        "/respond" { HTTP::respond 200 content "replaced" }
        "/reject" { reject }
    }
}
when CACHE_UPDATE {
    if { [HTTP::header exists X-No-Store] } { CACHE::disable }
}`
	c, err := httpcache.New(httpcache.Config{Profile: "/Common/wa", Size: 1 << 20, MaxEntries: 100, MaxAge: time.Hour, MaxObject: 1 << 20, InsertAge: true})
	if err != nil {
		t.Fatal(err)
	}
	p, lg := newPlane(t)
	cfg := l7Config(t, "127.0.237.21:80", false, mblb.HTTPOptions{Cache: c}, "", "127.0.237.31:80")
	var rlog *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, rlog = compileRules(t, rule)
	mustApply(t, p, cfg)

	cl := dialHTTPVS(t, "127.0.237.21:80")
	for i, tc := range []struct {
		path, hdr string
		body      string // what the client gets
		hits      string // X-Hits ("": not a hit)
	}{
		{path: "/a", body: "n=1 /a"},
		{path: "/a", body: "n=1 /a", hits: "1"},
		{path: "/a", body: "n=1 /a", hits: "2"},
		// CACHE::disable in CACHE_REQUEST: the member answers, and its
		// answer is not stored (the first one stays).
		{path: "/skip", body: "n=1 /skip"},
		{path: "/skip", body: "n=2 /skip"},
		{path: "/skip", body: "n=3 /skip"},
		// CACHE::expire in CACHE_REQUEST: the member's answer is stored
		// anew and its hits count from one.
		{path: "/a", hdr: "X-Expire: 1\r\n", body: "n=2 /a"},
		{path: "/a", body: "n=2 /a", hits: "1"},
		// CACHE::disable in CACHE_UPDATE: never stored.
		{path: "/nostore", body: "n=1 /nostore"},
		{path: "/nostore", body: "n=2 /nostore"},
		// CACHE::useragent: one answer per browser.
		{path: "/ua", hdr: "User-Agent: one\r\n", body: "n=1 /ua"},
		{path: "/ua", hdr: "User-Agent: two\r\n", body: "n=2 /ua"},
		{path: "/ua", hdr: "User-Agent: one\r\n", body: "n=1 /ua", hits: "1"},
		// HTTP::respond in CACHE_RESPONSE replaces the hit.
		{path: "/respond", body: "n=1 /respond"},
		{path: "/respond", body: "replaced"},
	} {
		r, body, err := cl.do(httpReq("h", tc.path, tc.hdr))
		if err != nil {
			t.Fatalf("%d %s: %v (log %s)", i, tc.path, err, lg)
		}
		if body != tc.body || r.Header.Get("X-Hits") != tc.hits {
			t.Errorf("%d %s: body %q X-Hits %q, want %q %q", i, tc.path, body, r.Header.Get("X-Hits"), tc.body, tc.hits)
		}
		if hit := r.Header.Get("X-Cache") == "HIT"; hit != (tc.hits != "") {
			t.Errorf("%d %s: X-Cache %q", i, tc.path, r.Header.Get("X-Cache"))
		}
		if tc.hits != "" && r.Header.Get("Age") == "" {
			t.Errorf("%d %s: a hit without its Age", i, tc.path)
		}
	}
	lines := strings.Join(rlog.Lines(), "\n")
	for _, want := range []string{`/a age=\d+ hits=2 fresh=1 length=6`, `/ua age=\d+ hits=1 fresh=1 length=7`} {
		if !regexp.MustCompile(want).MatchString(lines) {
			t.Errorf("rule log lacks %q:\n%s", want, lines)
		}
	}

	// reject in CACHE_RESPONSE ends the client instead of the hit.
	cl2 := dialHTTPVS(t, "127.0.237.21:80")
	if _, body, err := cl2.do(httpReq("h", "/reject", "")); err != nil || body != "n=1 /reject" {
		t.Fatalf("/reject: %q %v", body, err)
	}
	if _, body, err := cl2.do(httpReq("h", "/reject", "")); err == nil {
		t.Fatalf("a rejected hit answered %q", body)
	}
}
