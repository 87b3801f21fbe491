package httpcache

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// t0 is when the tests store their answers.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func testConfig() Config {
	return Config{
		Profile: "/Common/wa", Size: 1 << 20, MaxEntries: 100, MaxAge: time.Hour,
		MinObject: 10, MaxObject: 1000, InsertAge: true,
	}
}

func mustNew(t testing.TB, c Config) *Cache {
	t.Helper()
	ca, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// request is a request head: its line, its fields, the blank line.
func request(line string, fields ...string) []byte {
	return []byte(line + "\r\n" + joinFields(fields) + "\r\n")
}

// response is a response head with status (code and reason).
func response(status string, fields ...string) []byte {
	return []byte("HTTP/1.1 " + status + "\r\n" + joinFields(fields) + "\r\n")
}

func joinFields(fields []string) string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	return b.String()
}

func httpDate(t time.Time) string { return t.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT") }

var body100 = []byte(strings.Repeat("b", 100))

func TestCacheableRequest(t *testing.T) {
	cfg := testConfig()
	cfg.HonorClient = true // cache-client-cache-control-mode none or max-age
	c := mustNew(t, cfg)
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"HEAD /x?y=1 HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"GET / HTTP/1.0\r\n\r\n", true},
		{"GET /\n\n", true},
		{"GET / HTTP/1.1\nHost: a\nAccept: */*\n\n", true},
		{"POST / HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"PUT / HTTP/1.1\r\n\r\n", false},
		{"OPTIONS * HTTP/1.1\r\n\r\n", false},
		{"get / HTTP/1.1\r\n\r\n", false},
		{"GET\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nauthorization: Bearer t\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nCache-Control: no-cache\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nCache-Control: NO-STORE\r\n\r\n", false},
		{"GET / HTTP/1.1\r\ncache-control: max-age=0 , no-cache\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nCache-Control: max-age=0\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nCache-Control: no-transform\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nCache-Control: x=\"no-cache\"\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nPragma: no-cache\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nPragma: x-other\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nCookie: s=1\r\n\r\n", true},
		{"GET / HTTP/1.1\r\nno colon here\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nHost : a\r\n\r\n", false},
	} {
		if got := c.Cacheable([]byte(tc.head)); got != tc.want {
			t.Errorf("Cacheable(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
	// BIG-IP's default mode, all, ignores what clients say of caching.
	all := mustNew(t, testConfig())
	for _, h := range []string{"GET / HTTP/1.1\r\nCache-Control: no-cache\r\n\r\n", "GET / HTTP/1.1\r\nPragma: no-cache\r\n\r\n"} {
		if !all.Cacheable([]byte(h)) {
			t.Errorf("mode all: Cacheable(%q) = false", h)
		}
	}
	if all.Cacheable([]byte("GET / HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n")) {
		t.Error("mode all: a request with Authorization is cacheable")
	}
}

func TestStoreResponse(t *testing.T) {
	date := "Date: " + httpDate(t0)
	for _, tc := range []struct {
		name string
		head []byte
		body int
		want bool
	}{
		{"200", response("200 OK"), 100, true},
		{"200 with no reason", []byte("HTTP/1.1 200\r\n\r\n"), 100, true},
		{"HTTP/1.0 200", []byte("HTTP/1.0 200 OK\r\n\r\n"), 100, true},
		{"203", response("203 Non-Authoritative Information"), 100, true},
		{"300", response("300 Multiple Choices"), 100, true},
		{"301", response("301 Moved Permanently", "Location: /b"), 100, true},
		{"410", response("410 Gone"), 100, true},
		{"206", response("206 Partial Content", "Content-Range: bytes 0-99/200"), 100, false},
		{"302", response("302 Found", "Location: /b"), 100, false},
		{"304", response("304 Not Modified"), 100, false},
		{"404", response("404 Not Found"), 100, false},
		{"500", response("500 Internal Server Error"), 100, false},
		{"2000", []byte("HTTP/1.1 2000 OK\r\n\r\n"), 100, false},
		{"no status line", []byte("200 OK\r\n\r\n"), 100, false},
		{"public", response("200 OK", "Cache-Control: public, max-age=60"), 100, true},
		{"no-store", response("200 OK", "Cache-Control: no-store"), 100, false},
		{"private", response("200 OK", "Cache-Control: Private"), 100, false},
		{"no-cache", response("200 OK", "Cache-Control: max-age=60, no-cache"), 100, false},
		{"qualified no-cache", response("200 OK", `Cache-Control: no-cache="Set-Cookie, X-A"`), 100, false},
		{"private in a second field", response("200 OK", "Cache-Control: max-age=60", "Cache-Control: private"), 100, false},
		{"Pragma no-cache alone", response("200 OK", "Pragma: no-cache"), 100, false},
		{"Pragma no-cache with Cache-Control", response("200 OK", "Pragma: no-cache", "Cache-Control: max-age=60"), 100, true},
		{"Set-Cookie", response("200 OK", "Set-Cookie: s=1"), 100, false},
		{"set-cookie", response("200 OK", "set-cookie: s=1"), 100, false},
		{"Vary Accept-Encoding", response("200 OK", "Vary: Accept-Encoding"), 100, true},
		{"Vary empty", response("200 OK", "Vary: "), 100, true},
		{"Vary User-Agent", response("200 OK", "Vary: accept-encoding, User-Agent"), 100, false},
		{"Vary in two fields", response("200 OK", "Vary: Accept-Encoding", "Vary: Cookie"), 100, false},
		{"Vary *", response("200 OK", "Vary: *"), 100, false},
		{"gzip varying on Accept-Encoding", response("200 OK", "Vary: Accept-Encoding", "Content-Encoding: gzip"), 100, false},
		{"identity varying on Accept-Encoding", response("200 OK", "Vary: Accept-Encoding", "Content-Encoding: identity"), 100, true},
		{"gzip, no Vary", response("200 OK", "Content-Encoding: gzip"), 100, true},
		{"body below min", response("200 OK"), 9, false},
		{"body at min", response("200 OK"), 10, true},
		{"body at max", response("200 OK"), 1000, true},
		{"body above max", response("200 OK"), 1001, false},
		{"Content-Length matches", response("200 OK", "Content-Length: 100"), 100, true},
		{"Content-Length is not the body's (a HEAD's answer)", response("200 OK", "Content-Length: 5000"), 100, false},
		{"Content-Length twice, different", response("200 OK", "Content-Length: 100", "Content-Length: 101"), 100, false},
		{"Content-Length not a number", response("200 OK", "Content-Length: 1e2"), 100, false},
		{"chunked", response("200 OK", "Transfer-Encoding: chunked"), 100, true},
		{"max-age=0", response("200 OK", "Cache-Control: max-age=0"), 100, false},
		{"max-age not a number", response("200 OK", "Cache-Control: max-age=ten"), 100, false},
		{"max-age empty", response("200 OK", "Cache-Control: max-age="), 100, false},
		{"s-maxage=0", response("200 OK", "Cache-Control: s-maxage=0, max-age=60"), 100, false},
		{"Expires 0", response("200 OK", date, "Expires: 0"), 100, false},
		{"Expires before Date", response("200 OK", date, "Expires: "+httpDate(t0.Add(-time.Minute))), 100, false},
		{"Expires equal to Date", response("200 OK", date, "Expires: "+httpDate(t0)), 100, false},
		{"Age past max-age", response("200 OK", "Cache-Control: max-age=60", "Age: 60"), 100, false},
		{"Age past cache-max-age", response("200 OK", "Age: 3600"), 100, false},
		{"a line with no colon", response("200 OK", "Server x"), 100, false},
	} {
		c := mustNew(t, testConfig())
		body := bytes.Repeat([]byte("b"), tc.body)
		if got := c.Store([]byte("a"), []byte("/x"), tc.head, body, t0); got != tc.want {
			t.Errorf("%s: Store = %v, want %v", tc.name, got, tc.want)
		}
		if _, ok := c.Lookup(nil, []byte("a"), []byte("/x"), false, t0); ok != tc.want {
			t.Errorf("%s: Lookup found it: %v, want %v", tc.name, ok, tc.want)
		}
	}
}

// TestFreshness: an answer is fresh until its lifetime has passed, then
// it is a miss and dropped.
func TestFreshness(t *testing.T) {
	date := "Date: " + httpDate(t0.Add(-30*time.Second)) // the member's clock is behind
	for _, tc := range []struct {
		name     string
		fields   []string
		lifetime time.Duration
	}{
		{"nothing: cache-max-age", nil, time.Hour},
		{"max-age", []string{"Cache-Control: max-age=60"}, time.Minute},
		{"quoted max-age", []string{`Cache-Control: max-age="60"`}, time.Minute},
		{"s-maxage before max-age", []string{"Cache-Control: max-age=60, s-maxage=30"}, 30 * time.Second},
		{"s-maxage longer than max-age", []string{"Cache-Control: s-maxage=90", "Cache-Control: max-age=60"}, 90 * time.Second},
		{"the first max-age", []string{"Cache-Control: max-age=60", "Cache-Control: max-age=10"}, time.Minute},
		{"max-age above cache-max-age", []string{"Cache-Control: max-age=7200"}, time.Hour},
		{"huge max-age", []string{"Cache-Control: max-age=999999999999999999999"}, time.Hour},
		{"max-age over Expires", []string{"Cache-Control: max-age=10", date, "Expires: " + httpDate(t0.Add(time.Hour))}, 10 * time.Second},
		{"Expires minus Date", []string{date, "Expires: " + httpDate(t0.Add(90*time.Second))}, 2 * time.Minute},
		{"Expires minus Date above cache-max-age", []string{date, "Expires: " + httpDate(t0.Add(2*time.Hour))}, time.Hour},
		{"Expires without Date", []string{"Expires: " + httpDate(t0.Add(90*time.Second))}, 90 * time.Second},
		{"Expires, RFC 850 form", []string{"Expires: " + t0.Add(90*time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT")}, 90 * time.Second},
		{"Expires, asctime form", []string{"Expires: " + t0.Add(90*time.Second).Format("Mon Jan _2 15:04:05 2006")}, 90 * time.Second},
		{"Expires and a bad Date", []string{"Date: yesterday", "Expires: " + httpDate(t0.Add(90*time.Second))}, 90 * time.Second},
		{"max-age less the member's Age", []string{"Cache-Control: max-age=60", "Age: 20"}, 40 * time.Second},
		{"cache-max-age less the member's Age", []string{"Age: 600"}, 50 * time.Minute},
		{"a bad Age is ignored", []string{"Cache-Control: max-age=60", "Age: soon"}, time.Minute},
	} {
		c := mustNew(t, testConfig())
		if !c.Store([]byte("a"), []byte("/x"), response("200 OK", tc.fields...), body100, t0) {
			t.Errorf("%s: not stored", tc.name)
			continue
		}
		if _, ok := c.Lookup(nil, []byte("a"), []byte("/x"), false, t0.Add(tc.lifetime-time.Millisecond)); !ok {
			t.Errorf("%s: stale before %v", tc.name, tc.lifetime)
		}
		if _, ok := c.Lookup(nil, []byte("a"), []byte("/x"), false, t0.Add(tc.lifetime)); ok {
			t.Errorf("%s: still fresh at %v", tc.name, tc.lifetime)
		}
	}
}

// TestStaleDropped: a stale entry found is a miss, and is gone.
func TestStaleDropped(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("a"), []byte("/x"), response("200 OK", "Cache-Control: max-age=10"), body100, t0)
	c.Store([]byte("a"), []byte("/y"), response("200 OK"), body100, t0)
	if st := c.Stats(); st.Entries != 2 || st.Inserts != 2 {
		t.Fatalf("stats %+v", st)
	}
	for i := range 2 {
		if _, ok := c.Lookup(nil, []byte("a"), []byte("/x"), false, t0.Add(10*time.Second)); ok {
			t.Fatalf("lookup %d: a stale entry answered", i)
		}
	}
	st := c.Stats()
	if want := (Stats{Misses: 2, Inserts: 2, Entries: 1, Bytes: st.Bytes}); st != want || st.Bytes <= 100 {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

// TestAge: a hit's Age counts the whole seconds since it was stored and
// the Age the member sent; without cache-insert-age-header the member's
// own Age passes as it came.
func TestAge(t *testing.T) {
	for _, tc := range []struct {
		insert bool
		member []string
		at     time.Duration
		want   []string // the hit's Age fields
	}{
		{true, nil, 0, []string{"0"}},
		{true, nil, 10*time.Second + 900*time.Millisecond, []string{"10"}},
		{true, []string{"Age: 5"}, 10 * time.Second, []string{"15"}},
		{true, []string{"Age: 5"}, -time.Second, []string{"5"}}, // a now before the store
		{false, nil, 10 * time.Second, nil},
		{false, []string{"Age: 5"}, 10 * time.Second, []string{"5"}},
	} {
		cfg := testConfig()
		cfg.InsertAge = tc.insert
		c := mustNew(t, cfg)
		c.Store([]byte("a"), []byte("/x"), response("200 OK", tc.member...), body100, t0)
		out, ok := c.Lookup(nil, []byte("a"), []byte("/x"), true, t0.Add(tc.at))
		if !ok {
			t.Fatalf("%+v: a miss", tc)
		}
		var got []string
		for _, line := range strings.Split(string(out), "\r\n") {
			if v, ok := strings.CutPrefix(line, "Age: "); ok {
				got = append(got, v)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("insert=%v member=%v at %v: Age %q, want %q", tc.insert, tc.member, tc.at, got, tc.want)
		}
	}
}

// TestStoredHead: the stored head keeps the member's end-to-end fields,
// drops the hop-by-hop ones and is framed by a Content-Length; a HEAD
// gets it without the body. The output is exact.
func TestStoredHead(t *testing.T) {
	c := mustNew(t, testConfig())
	head := "HTTP/1.1 200 OK\r\n" +
		"Server: m1\r\n" +
		"Connection: keep-alive, X-Hop\r\n" +
		"Keep-Alive: timeout=5\r\n" +
		"Transfer-Encoding: chunked\r\n" +
		"Content-Type: text/plain\n" + // a bare LF
		"Proxy-Connection: keep-alive\r\n" +
		"TE: trailers\r\n" +
		"Trailer: X-Sum\r\n" +
		"Upgrade: h2c\r\n" +
		"x-hop: 1\r\n" +
		"Age: 3\r\n" +
		"Content-Length: 7\r\n" + // ignored beside chunked
		"ETag: \"v1\"\r\n" +
		"\r\n"
	body := []byte("0123456789abcdef")
	if !c.Store([]byte("a"), []byte("/x"), []byte(head), body, t0) {
		t.Fatal("not stored")
	}
	want := "HTTP/1.1 200 OK\r\n" +
		"Server: m1\r\n" +
		"Content-Type: text/plain\r\n" +
		"ETag: \"v1\"\r\n" +
		"Content-Length: 16\r\n" +
		"Age: 5\r\n" +
		"\r\n"
	dst := make([]byte, 0, 1024)
	out, ok := c.Lookup(dst, []byte("a"), []byte("/x"), true, t0.Add(2*time.Second))
	if !ok || string(out) != want {
		t.Errorf("HEAD hit:\n%q\nwant\n%q", out, want)
	}
	out, ok = c.Lookup(append(dst, "prefix|"...), []byte("a"), []byte("/x"), false, t0.Add(2*time.Second))
	if want := "prefix|" + want + string(body); !ok || string(out) != want {
		t.Errorf("GET hit:\n%q\nwant\n%q", out, want)
	}
}

// TestStoreCopies: Store keeps its own copy of what the caller reuses.
func TestStoreCopies(t *testing.T) {
	c := mustNew(t, testConfig())
	host, uri := []byte("a"), []byte("/x")
	head, body := response("200 OK", "Server: m1"), bytes.Repeat([]byte("b"), 100)
	c.Store(host, uri, head, body, t0)
	for _, b := range [][]byte{host, uri, head, body} {
		for i := range b {
			b[i] = 'z'
		}
	}
	out, ok := c.Lookup(nil, []byte("a"), []byte("/x"), false, t0)
	if !ok || !bytes.Contains(out, []byte("Server: m1")) || !bytes.HasSuffix(out, bytes.Repeat([]byte("b"), 100)) {
		t.Errorf("after the caller's buffers changed: %v %q", ok, out)
	}
}

// TestStoreReplaces: a newer answer replaces the one kept, and one that
// is not kept drops it.
func TestStoreReplaces(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("a"), []byte("/x"), response("200 OK", "ETag: v1"), body100, t0)
	c.Store([]byte("a"), []byte("/x"), response("200 OK", "ETag: v2"), body100, t0)
	out, _ := c.Lookup(nil, []byte("a"), []byte("/x"), true, t0)
	if !bytes.Contains(out, []byte("ETag: v2")) {
		t.Errorf("after a second store: %q", out)
	}
	if st := c.Stats(); st.Entries != 1 || st.Inserts != 2 || st.Evictions != 0 {
		t.Errorf("stats %+v", st)
	}
	if c.Store([]byte("a"), []byte("/x"), response("200 OK", "Set-Cookie: s=1"), body100, t0) {
		t.Fatal("an answer with a cookie was stored")
	}
	if _, ok := c.Lookup(nil, []byte("a"), []byte("/x"), true, t0); ok {
		t.Error("the older answer stayed")
	}
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestHostKey: entries are kept by Host, in any case, and target.
func TestHostKey(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("WWW.Example.com"), []byte("/x"), response("200 OK"), body100, t0)
	long := strings.Repeat("H", 300)
	c.Store([]byte(long), []byte("/x"), response("200 OK"), body100, t0)
	for _, tc := range []struct {
		host, uri string
		want      bool
	}{
		{"www.example.com", "/x", true},
		{"WWW.EXAMPLE.COM", "/x", true},
		{"www.example.com", "/X", false},
		{"www.example.com:80", "/x", false},
		{"example.com", "/x", false},
		{strings.ToLower(long), "/x", true},
		{long, "/x", true},
	} {
		if _, ok := c.Lookup(nil, []byte(tc.host), []byte(tc.uri), true, t0); ok != tc.want {
			t.Errorf("Lookup(%.20q, %q) = %v, want %v", tc.host, tc.uri, ok, tc.want)
		}
	}
}

// TestURILists: exclude wins over pinned, pinned over include; an empty
// include list includes everything; patterns are case-insensitive
// regular expressions matched anywhere in the target.
func TestURILists(t *testing.T) {
	cfg := testConfig()
	cfg.URIInclude = []string{`\.(css|js)$`, `^/static/`}
	cfg.URIExclude = []string{`^/static/private/`, `nocache`}
	cfg.URIPinned = []string{`^/static/logo\.png$`, `^/pinned/`, `^/static/private/pin`}
	withInclude := mustNew(t, cfg)
	cfg.URIInclude = nil
	noInclude := mustNew(t, cfg)
	for _, tc := range []struct {
		uri string
		// cacheable with and without the include list; pinned
		inc, all, pinned bool
	}{
		{"/a.css", true, true, false},
		{"/A.CSS", true, true, false},
		{"/a.js?v=2", false, true, false},
		{"/index.html", false, true, false},
		{"/static/x.html", true, true, false},
		{"/x/static/y", false, true, false},
		{"/static/private/x", false, false, false},
		{"/x.js?nocache=1", false, false, false},
		{"/static/logo.png", true, true, true},
		{"/static/logo.png?v=1", true, true, false},
		{"/pinned/a.html", true, true, true},
		{"/static/private/pin.png", false, false, false},
	} {
		for _, c := range []struct {
			c    *Cache
			want bool
		}{{withInclude, tc.inc}, {noInclude, tc.all}} {
			if got := c.c.Cacheable(request("GET "+tc.uri+" HTTP/1.1", "Host: a")); got != c.want {
				t.Errorf("include %v: Cacheable(%q) = %v, want %v", c.c.cfg.URIInclude, tc.uri, got, c.want)
			}
			if got := c.c.Store([]byte("a"), []byte(tc.uri), response("200 OK"), body100, t0); got != c.want {
				t.Errorf("include %v: Store(%q) = %v, want %v", c.c.cfg.URIInclude, tc.uri, got, c.want)
			}
			// A pinned URI ignores the size bounds.
			if got := c.c.Store([]byte("a"), []byte(tc.uri), response("200 OK"), []byte("b"), t0); got != (c.want && tc.pinned) {
				t.Errorf("include %v: Store(%q) of 1 byte = %v, want %v", c.c.cfg.URIInclude, tc.uri, got, c.want && tc.pinned)
			}
		}
	}
}

// entrySize is what one answer of this test file takes in the cache.
func entrySize(t *testing.T, head []byte, body []byte) int64 {
	c := mustNew(t, testConfig())
	c.Store([]byte("a"), []byte("/x"), head, body, t0)
	return c.Stats().Bytes
}

// TestEvictLRU: the least recently used entries go to make room, by
// cache-size or by cache-max-entries.
func TestEvictLRU(t *testing.T) {
	size := entrySize(t, response("200 OK"), body100)
	for _, tc := range []struct {
		name    string
		size    int64
		entries int
	}{
		{"by size", 3*size + size/2, 100},
		{"by count", 1 << 20, 3},
	} {
		cfg := testConfig()
		cfg.Size, cfg.MaxEntries = tc.size, tc.entries
		c := mustNew(t, cfg)
		store := func(uri string) bool {
			return c.Store([]byte("a"), []byte(uri), response("200 OK"), body100, t0)
		}
		has := func(uri string) bool {
			_, ok := c.Lookup(nil, []byte("a"), []byte(uri), true, t0)
			return ok
		}
		store("/1")
		store("/2")
		store("/3")
		has("/1") // /2 is now the least recently used
		if !store("/4") {
			t.Fatalf("%s: /4 not stored", tc.name)
		}
		got := fmt.Sprint(has("/1"), has("/2"), has("/3"), has("/4"))
		if got != "true false true true" {
			t.Errorf("%s: /1 /2 /3 /4 kept: %s", tc.name, got)
		}
		store("/5") // /1 goes: /3, /4 and /1 were used since
		if has("/1") || !has("/5") {
			t.Errorf("%s: after /5, /1 %v /5 %v", tc.name, has("/1"), has("/5"))
		}
		if st := c.Stats(); st.Evictions != 2 || st.Entries != 3 || st.Bytes != 3*size || st.Inserts != 5 {
			t.Errorf("%s: stats %+v", tc.name, st)
		}
	}
	// An answer bigger than the whole cache is not stored, and evicts
	// nothing.
	cfg := testConfig()
	cfg.Size = size
	c := mustNew(t, cfg)
	c.Store([]byte("a"), []byte("/1"), response("200 OK"), body100, t0)
	if c.Store([]byte("a"), []byte("/2"), response("200 OK"), append(body100, 'b'), t0) {
		t.Error("an answer bigger than cache-size was stored")
	}
	if st := c.Stats(); st.Entries != 1 || st.Evictions != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestPinned: pinned answers ignore the size bounds, are never evicted,
// and block an answer that does not fit beside them; they still go
// stale.
func TestPinned(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEntries = 3
	cfg.URIPinned = []string{"^/pin/"}
	c := mustNew(t, cfg)
	store := func(uri string, body []byte, fields ...string) bool {
		return c.Store([]byte("a"), []byte(uri), response("200 OK", fields...), body, t0)
	}
	has := func(uri string, at time.Duration) bool {
		_, ok := c.Lookup(nil, []byte("a"), []byte(uri), true, t0.Add(at))
		return ok
	}
	if !store("/pin/small", []byte("b"), "Cache-Control: max-age=60") || !store("/pin/big", bytes.Repeat([]byte("b"), 5000)) {
		t.Fatal("pinned answers outside the size bounds were not stored")
	}
	if store("/big", bytes.Repeat([]byte("b"), 5000)) {
		t.Fatal("an unpinned answer above cache-object-max-size was stored")
	}
	store("/1", body100)
	store("/2", body100) // evicts /1, not a pin
	if !has("/pin/small", 0) || !has("/pin/big", 0) || has("/1", 0) || !has("/2", 0) {
		t.Errorf("kept: /pin/small %v /pin/big %v /1 %v /2 %v", has("/pin/small", 0), has("/pin/big", 0), has("/1", 0), has("/2", 0))
	}
	if !store("/pin/3", body100) { // evicts /2
		t.Fatal("a third pin was not stored")
	}
	// Three pins fill cache-max-entries: nothing else fits, and nothing
	// is evicted for it.
	if store("/4", body100) || store("/pin/4", body100) {
		t.Error("an answer was stored beside a full set of pins")
	}
	if st := c.Stats(); st.Entries != 3 || st.Evictions != 2 {
		t.Errorf("stats %+v", st)
	}
	// Once /pin/small is stale, its place is free, even if nobody asked
	// for it again.
	if !c.Store([]byte("a"), []byte("/5"), response("200 OK"), body100, t0.Add(time.Minute)) {
		t.Error("a stale pin kept its place")
	}
	if has("/pin/small", time.Minute) || !has("/pin/big", time.Minute) || !has("/5", time.Minute) {
		t.Error("after the stale pin went")
	}
	c.Purge()
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 || has("/pin/big", 0) {
		t.Errorf("after Purge: %+v", st)
	}
	if !store("/6", body100) || !store("/7", body100) || !store("/8", body100) || !store("/9", body100) {
		t.Error("after Purge, the cache did not fill again")
	}
}

func TestStatsReset(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("a"), []byte("/x"), response("200 OK"), body100, t0)
	c.Lookup(nil, []byte("a"), []byte("/x"), false, t0)
	c.Lookup(nil, []byte("a"), []byte("/y"), false, t0)
	st := c.Stats()
	if st.Hits != 1 || st.Misses != 1 || st.Inserts != 1 || st.Entries != 1 || st.Bytes <= 100 {
		t.Fatalf("stats %+v", st)
	}
	c.ResetStats()
	if got := c.Stats(); got != (Stats{Entries: 1, Bytes: st.Bytes}) {
		t.Errorf("after ResetStats: %+v", got)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Size = -1 << 20 }, "cache-size -1 is negative"},
		{func(c *Config) { c.Size = -5 }, "cache-size -5 bytes is negative"},
		{func(c *Config) { c.MaxEntries = -1 }, "cache-max-entries -1 is negative"},
		{func(c *Config) { c.MaxAge = -time.Second }, "cache-max-age -1 is negative"},
		{func(c *Config) { c.MinObject = -1 }, "cache-object-min-size -1 is negative"},
		{func(c *Config) { c.MaxObject = -1; c.MinObject = -2 }, "cache-object-min-size -2 is negative"},
		{func(c *Config) { c.MaxObject = -1; c.MinObject = 0 }, "cache-object-max-size -1 is negative"},
		{func(c *Config) { c.MinObject, c.MaxObject = 900, 500 }, "cache-object-min-size 900 is above cache-object-max-size 500"},
		{func(c *Config) { c.URIInclude = []string{`\.css$`, "*.jpg"} }, `cache-uri-include "*.jpg" is not a regular expression: missing argument to repetition operator`},
		{func(c *Config) { c.URIExclude = []string{"/a(b"} }, `cache-uri-exclude "/a(b" is not a regular expression: missing closing )`},
		{func(c *Config) { c.URIPinned = []string{"[z-a]"} }, `cache-uri-pinned "[z-a]" is not a regular expression: invalid character class range`},
	} {
		cfg := testConfig()
		tc.mod(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", cfg, err, tc.want)
		}
	}
	// Zeros are settings, not errors: such a cache keeps nothing.
	c, err := New(Config{})
	if err != nil {
		t.Fatalf("New(Config{}) = %v", err)
	}
	if c.Store([]byte("a"), []byte("/x"), response("200 OK"), nil, t0) {
		t.Error("a zero cache stored an answer")
	}
}

// TestConcurrent runs lookups, stores, stats and purges at once, in a
// cache small enough to evict: under -race it finds unguarded state, and
// every hit must be the answer stored for its URI.
func TestConcurrent(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEntries = 8
	cfg.Size = 6 * entrySize(t, response("200 OK", "X-URI: /u00"), []byte("/u00"+string(body100)))
	cfg.URIPinned = []string{"^/u0[01]$"}
	c := mustNew(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]byte, 0, 512)
			for i := range 400 {
				uri := fmt.Sprintf("/u%02d", (g*7+i)%20)
				now := t0.Add(time.Duration(i) * time.Millisecond)
				switch i % 4 {
				case 0:
					c.Store([]byte("A"), []byte(uri), response("200 OK", "X-URI: "+uri), []byte(uri+string(body100)), now)
				case 3:
					if i%100 == 99 {
						if g == 0 {
							c.Purge()
						} else if g == 1 {
							c.ResetStats()
						}
					}
					c.Stats()
				default:
					out, ok := c.Lookup(dst[:0], []byte("a"), []byte(uri), i%3 == 0, now)
					if ok && (!bytes.Contains(out, []byte("X-URI: "+uri+"\r\n")) || (i%3 != 0 && !bytes.Contains(out, []byte("\r\n\r\n"+uri)))) {
						select {
						case errs <- fmt.Sprintf("%s answered with %q", uri, out):
						default:
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	st := c.Stats()
	if st.Entries > uint64(cfg.MaxEntries) || st.Bytes > cfg.Size {
		t.Errorf("over the limits: %+v", st)
	}
	// The lists and the index agree with the counts.
	c.mu.Lock()
	defer c.mu.Unlock()
	n, size := 0, int64(0)
	for _, list := range []*entry{&c.lru, &c.pins} {
		for e := list.next; e != list; e = e.next {
			if c.hosts[e.host][e.uri] != e {
				t.Errorf("%s%s is listed but not indexed", e.host, e.uri)
			}
			n++
			size += e.size()
		}
	}
	if n != c.entries || size != c.bytes {
		t.Errorf("listed %d entries of %d bytes, counted %d of %d", n, size, c.entries, c.bytes)
	}
}

// TestLookupHitNoAlloc: a hit into a buffer with room allocates nothing,
// host in any case.
func TestLookupHitNoAlloc(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("www.example.com"), []byte("/static/app.js?v=3"), response("200 OK", "Content-Type: text/javascript"), body100, t0)
	dst := make([]byte, 0, 4096)
	for _, host := range []string{"www.example.com", "WWW.Example.COM"} {
		h, u := []byte(host), []byte("/static/app.js?v=3")
		n := testing.AllocsPerRun(100, func() {
			if _, ok := c.Lookup(dst[:0], h, u, false, t0.Add(time.Second)); !ok {
				t.Fatal("a miss")
			}
		})
		if n != 0 {
			t.Errorf("host %q: a hit allocates %v times", host, n)
		}
	}
}

func BenchmarkLookupHit(b *testing.B) {
	c := mustNew(b, testConfig())
	host, uri := []byte("www.example.com"), []byte("/static/app.js?v=3")
	body := bytes.Repeat([]byte("b"), 1000)
	c.Store(host, uri, response("200 OK", "Content-Type: text/javascript", "Date: "+httpDate(t0)), body, t0)
	dst := make([]byte, 0, 4096)
	now := t0.Add(time.Second)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, ok := c.Lookup(dst[:0], host, uri, false, now); !ok {
			b.Fatal("a miss")
		}
	}
}

func TestExpire(t *testing.T) {
	c := mustNew(t, testConfig())
	head := []byte("HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\n\r\n")
	if !c.Store([]byte("WWW.example.com"), []byte("/a"), head, body100, t0) {
		t.Fatal("not stored")
	}
	c.Expire([]byte("www.EXAMPLE.com"), []byte("/b")) // another URI: kept
	if _, ok := c.Lookup(nil, []byte("www.example.com"), []byte("/a"), false, t0); !ok {
		t.Fatal("expiring another URI dropped this one")
	}
	c.Expire([]byte("www.EXAMPLE.com"), []byte("/a"))
	if _, ok := c.Lookup(nil, []byte("www.example.com"), []byte("/a"), false, t0); ok {
		t.Fatal("an expired answer is still served")
	}
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("stats after expire: %+v", st)
	}
}
