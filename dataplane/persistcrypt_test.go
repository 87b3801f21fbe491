package dataplane

import (
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestPersistCookieEncryption: cookie persistence with cookie-encryption
// on an HTTP virtual with two members, with real clients: the inserted
// cookie is encrypted and brings its client back; a tampered one is
// ignored and the client balanced (and given a new cookie); a plain
// cookie is refused under required and honoured under preferred; the
// rewrite method encrypts what it writes.
func TestPersistCookieEncryption(t *testing.T) {
	const a, b = "127.76.3.11:80", "127.76.3.12:80"
	startCookieMember(t, a, "A")
	startCookieMember(t, b, "B")
	ci, err := cookiecrypt.New("s3cret phrase", 192)
	if err != nil {
		t.Fatal(err)
	}
	name := httpx.PoolCookieName("/Common/pool")
	plainB := httpx.EncodeMember(netip.MustParseAddrPort(b))
	p, _ := newPlane(t)
	apply := func(method mblb.CookieMethod, required bool) string {
		t.Helper()
		const vs = "127.76.3.1:80"
		cfg := l7Config(t, vs, true, mblb.HTTPOptions{
			Cookie:     httpx.CookieSpec{Name: name, HTTPOnly: true},
			CookieMode: mblb.CookieMode{Method: method, Crypt: &mblb.PersistCookieCrypt{Cipher: ci, Required: required}},
		}, "", a, b)
		cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/cookie", Method: PersistCookie, Timeout: 180 * time.Second}
		mustApply(t, p, cfg)
		return vs
	}
	get := func(c *httpRuleClient, path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		r, body, err := c.do(httpReq("h", path, hdr...))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return r, strings.Fields(body)[0]
	}
	// members asks four times with cookie and returns the members that
	// answered, and whether a response set the persistence cookie.
	members := func(vs, cookie string) (map[string]bool, bool) {
		t.Helper()
		c := dialHTTPVS(t, vs)
		seen, set := map[string]bool{}, false
		for i := 0; i < 4; i++ {
			r, m := get(c, "/x", "Cookie: "+name+"="+cookie+"\r\n")
			seen[m] = true
			if v, _ := cookieOf(r, name); v != "" {
				set = true
			}
		}
		return seen, set
	}

	vs := apply(mblb.CookieInsert, true)
	t.Run("round trip", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, Timeout: 5 * time.Second}
		first := ""
		for i := 0; i < 4; i++ {
			r, err := hc.Get("http://" + vs + "/x")
			if err != nil {
				t.Fatal(err)
			}
			var body [16]byte
			n, _ := r.Body.Read(body[:])
			r.Body.Close()
			m := strings.Fields(string(body[:n]))[0]
			if i == 0 {
				first = m
				v, line := cookieOf(r, name)
				clear, ok := ci.Decrypt(name, v)
				if !strings.HasPrefix(v, cookiecrypt.Prefix) || !ok || !strings.Contains(strings.ToLower(line), "httponly") {
					t.Fatalf("Set-Cookie %q: want an encrypted %s", line, name)
				}
				if got, _ := httpx.DecodeMember([]byte(clear)); map[string]string{a: "A", b: "B"}[got.String()] != m {
					t.Fatalf("the cookie names %s, the answer came from %s", got, m)
				}
			} else if m != first {
				t.Fatalf("request %d with the cookie went to %s, want %s", i, m, first)
			}
		}
		u, _ := url.Parse("http://" + vs)
		if len(jar.Cookies(u)) != 1 {
			t.Fatalf("the client holds %v", jar.Cookies(u))
		}
	})
	encB := ci.Encrypt(name, plainB)
	t.Run("encrypted honoured", func(t *testing.T) {
		if seen, set := members(vs, encB); len(seen) != 1 || !seen["B"] || set {
			t.Fatalf("an encrypted cookie naming B: answered by %v, cookie set again %v", seen, set)
		}
	})
	t.Run("tampered ignored", func(t *testing.T) {
		bad := []byte(encB)
		bad[len(bad)/2] ^= 1
		if bad[len(bad)/2] == '!' || bad[len(bad)/2] == ';' {
			bad[len(bad)/2] = 'A'
		}
		if seen, set := members(vs, string(bad)); len(seen) != 2 || !set {
			t.Fatalf("a tampered cookie: answered by %v, cookie set again %v; want both members and a new cookie", seen, set)
		}
	})
	t.Run("plain refused under required", func(t *testing.T) {
		if seen, _ := members(vs, plainB); len(seen) != 2 {
			t.Fatalf("a plain cookie under required held the client on %v", seen)
		}
	})
	t.Run("another cookie's value refused", func(t *testing.T) {
		moved := ci.Encrypt("BIGipServerother", plainB)
		if seen, _ := members(vs, moved); len(seen) != 2 {
			t.Fatalf("a value encrypted for another cookie held the client on %v", seen)
		}
	})

	vs = apply(mblb.CookieInsert, false)
	t.Run("preferred", func(t *testing.T) {
		if seen, _ := members(vs, plainB); len(seen) != 1 || !seen["B"] {
			t.Fatalf("a plain cookie under preferred: answered by %v, want B", seen)
		}
		if seen, _ := members(vs, encB); len(seen) != 1 || !seen["B"] {
			t.Fatalf("an encrypted cookie under preferred: answered by %v, want B", seen)
		}
	})

	vs = apply(mblb.CookieRewrite, true)
	t.Run("rewrite", func(t *testing.T) {
		c := dialHTTPVS(t, vs)
		r, m := get(c, "/rw")
		v, line := cookieOf(r, name)
		clear, ok := ci.Decrypt(name, v)
		got, _ := httpx.DecodeMember([]byte(clear))
		if !ok || !strings.Contains(line, "path=/app") || map[string]string{a: "A", b: "B"}[got.String()] != m {
			t.Fatalf("rewrite: Set-Cookie %q from %s", r.Header.Values("Set-Cookie"), m)
		}
	})
}
