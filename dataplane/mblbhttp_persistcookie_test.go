package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// startCookieMember is an HTTP member that answers "<label> <path>" and,
// as applications do, sets cookies of its own: /login sets
// JSESSIONID=<label>-session-<n>, /rw sets BIG-IP's rewrite placeholder
// BIGipCookie=000…0.
func startCookieMember(t *testing.T, addr, label string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/login":
			n++
			w.Header().Add("Set-Cookie", fmt.Sprintf("JSESSIONID=%s-session-%d; path=/", label, n))
		case "/rw":
			w.Header().Add("Set-Cookie", "BIGipCookie="+strings.Repeat("0", 40)+"; path=/app")
		}
		fmt.Fprintf(w, "%s %s", label, r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// cookieOf returns the value of the Set-Cookie named name in r, and the
// whole header line.
func cookieOf(r *http.Response, name string) (string, string) {
	for _, l := range r.Header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			if i := strings.IndexByte(v, ';'); i >= 0 {
				v = v[:i]
			}
			return v, l
		}
	}
	return "", ""
}

// persistCookieRule chooses the persistence per path, as published rules
// do; each client connection below uses one path, since a persist
// command holds for the connection's later requests.
const persistCookieRule = `
when HTTP_REQUEST {
    switch -glob [HTTP::path] {
        "/none*" { persist none }
        "/mine*" { persist cookie insert MINE 3600 }
        "/login" -
        "/hash*" { persist cookie hash JSESSIONID {0 9} 600 }
        "/rw*" { persist cookie rewrite RW }
        "/passive*" { persist cookie passive APP }
        "/resp*" { }
        default { persist cookie }
    }
}
when HTTP_RESPONSE {
    if { [HTTP::path] starts_with "/resp" } { persist cookie insert }
}
`

// TestHTTPRulePersistCookie: persist cookie's four methods and persist
// none on an HTTP virtual with OneConnect (every request balanced on its
// own) and a cookie persistence profile (insert, BIGipServer<pool>),
// with real requests.
func TestHTTPRulePersistCookie(t *testing.T) {
	const a, b = "127.0.235.11:80", "127.0.235.12:80"
	startCookieMember(t, a, "A")
	startCookieMember(t, b, "B")
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.0.235.1:80", true, mblb.HTTPOptions{
		Cookie: httpx.CookieSpec{Name: httpx.PoolCookieName("/Common/pool"), HTTPOnly: true},
	}, persistCookieRule, a, b)
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/cookie", Method: PersistCookie, Timeout: 180 * time.Second}
	mustApply(t, p, cfg)
	bEnc := string(httpx.AppendMember(nil, netip.MustParseAddrPort(b)))

	get := func(c *httpRuleClient, path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		r, body, err := c.do(httpReq("h", path, hdr...))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return r, body
	}
	member := func(body string) string { return strings.Fields(body)[0] }

	t.Run("profile", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		r, body := get(c, "/x")
		v, line := cookieOf(r, "BIGipServerpool")
		if v == "" || !strings.Contains(strings.ToLower(line), "httponly") {
			t.Fatalf("persist cookie: Set-Cookie %q, want the profile's BIGipServerpool cookie", r.Header.Values("Set-Cookie"))
		}
		for i := 0; i < 4; i++ {
			_, b2 := get(c, "/x", "Cookie: BIGipServerpool="+v+"\r\n")
			if member(b2) != member(body) {
				t.Fatalf("request %d with the cookie went to %s, want %s", i, member(b2), member(body))
			}
		}
	})
	t.Run("insert", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		r, _ := get(c, "/mine")
		v, line := cookieOf(r, "MINE")
		if v == "" || !strings.Contains(line, "expires=") || !strings.Contains(strings.ToLower(line), "httponly") {
			t.Fatalf("insert MINE 3600: Set-Cookie %q", r.Header.Values("Set-Cookie"))
		}
		if v2, _ := cookieOf(r, "BIGipServerpool"); v2 != "" {
			t.Fatalf("the profile's cookie was inserted too: %q", r.Header.Values("Set-Cookie"))
		}
		for i := 0; i < 4; i++ {
			r2, body := get(c, "/mine", "Cookie: other=1; MINE="+bEnc+"\r\n")
			if member(body) != "B" {
				t.Fatalf("request %d with MINE naming B went to %s", i, member(body))
			}
			if v, _ := cookieOf(r2, "MINE"); v != "" {
				t.Fatalf("the cookie was inserted again for a request that carried it: %q", r2.Header.Values("Set-Cookie"))
			}
		}
	})
	t.Run("none", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		seen := map[string]bool{}
		for i := 0; i < 4; i++ {
			r, body := get(c, "/none", "Cookie: BIGipServerpool="+bEnc+"\r\n")
			seen[member(body)] = true
			if h := r.Header.Values("Set-Cookie"); len(h) != 0 {
				t.Fatalf("persist none: Set-Cookie %q", h)
			}
		}
		if len(seen) != 2 {
			t.Fatalf("persist none: the profile's cookie still held every request on %v", seen)
		}
	})
	t.Run("hash", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		r, body := get(c, "/login")
		sess, _ := cookieOf(r, "JSESSIONID")
		if sess == "" {
			t.Fatalf("the member set no JSESSIONID: %q", r.Header.Values("Set-Cookie"))
		}
		for i := 0; i < 4; i++ {
			_, b2 := get(c, "/hash", "Cookie: JSESSIONID="+sess+"\r\n")
			if member(b2) != member(body) {
				t.Fatalf("request %d with %s went to %s, want %s", i, sess, member(b2), member(body))
			}
		}
		recs := records(p, persist.Filter{Mode: persist.Cookie})
		if len(recs) != 1 || recs[0].String() != sess[:9] || recs[0].Timeout != 600*time.Second {
			t.Fatalf("records %+v, want one keyed %q with 600 s", recs, sess[:9])
		}
	})
	t.Run("rewrite", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		r, body := get(c, "/rw")
		v, line := cookieOf(r, "RW")
		got, ok := httpx.DecodeMember([]byte(v))
		if !ok || !strings.Contains(line, "path=/app") || !strings.HasSuffix(got.String(), ":80") {
			t.Fatalf("rewrite RW: Set-Cookie %q", r.Header.Values("Set-Cookie"))
		}
		want := map[string]string{a: "A", b: "B"}[got.String()]
		if want != member(body) {
			t.Fatalf("the cookie names %s, the response came from %s", got, member(body))
		}
	})
	t.Run("passive", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		for i := 0; i < 4; i++ {
			r, body := get(c, "/passive", "Cookie: APP="+bEnc+"\r\n")
			if member(body) != "B" {
				t.Fatalf("request %d with APP naming B went to %s", i, member(body))
			}
			if h := r.Header.Values("Set-Cookie"); len(h) != 0 {
				t.Fatalf("passive inserted %q", h)
			}
		}
	})
	t.Run("in HTTP_RESPONSE", func(t *testing.T) {
		c := dialHTTPVS(t, "127.0.235.1:80")
		if _, _, err := c.do(httpReq("h", "/resp")); err == nil {
			t.Fatal("persist cookie in HTTP_RESPONSE: answered, want the client reset by the rule's error")
		}
	})
}

// TestHTTPRulePersistCookieRefused: BIG-IP refuses persist cookie on a
// virtual without a cookie persistence profile; the rule fails (the
// client is reset) and says why. persist none in CLIENT_ACCEPTED turns
// the source-address profile off for the whole connection.
func TestHTTPRulePersistCookieRefused(t *testing.T) {
	const a, b = "127.0.235.21:80", "127.0.235.22:80"
	startCookieMember(t, a, "A")
	startCookieMember(t, b, "B")
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.0.235.2:80", true, mblb.HTTPOptions{}, "", a, b)
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when HTTP_REQUEST { persist cookie insert }`)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.0.235.2:80")
	if _, _, err := c.do(httpReq("h", "/")); err == nil {
		t.Fatal("persist cookie without a cookie profile: answered")
	}
	eventually(t, "the log saying why", func() bool {
		return strings.Contains(strings.Join(lg.Lines(), "\n"), "requires an http profile and a cookie persistence profile")
	})

	cfg = l7Config(t, "127.0.235.2:80", true, mblb.HTTPOptions{}, `when CLIENT_ACCEPTED { persist none }`, a, b)
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(time.Minute)
	mustApply(t, p, cfg)
	c = dialHTTPVS(t, "127.0.235.2:80")
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		_, body, err := c.do(httpReq("h", "/"))
		if err != nil {
			t.Fatal(err)
		}
		seen[strings.Fields(body)[0]] = true
	}
	if len(seen) != 2 || len(records(p, persist.Filter{})) != 0 {
		t.Fatalf("persist none in CLIENT_ACCEPTED: members %v, records %d", seen, len(records(p, persist.Filter{})))
	}
}
