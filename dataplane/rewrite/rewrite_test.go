package rewrite

import (
	"net/netip"
	"strings"
	"testing"
)

func mustURI(t *testing.T, s string) URI {
	t.Helper()
	u, err := ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func testProfile(t *testing.T) *Profile {
	return &Profile{
		Name: "rw",
		Rules: []Rule{
			{Name: "app", Client: mustURI(t, "http://www.example.com/app/"), Server: mustURI(t, "http://internal.lan:8080/internal/"), Request: true, Response: true},
			{Name: "root", Client: mustURI(t, "http://www.example.com/"), Server: mustURI(t, "http://web.lan/"), Request: true, Response: true},
			{Name: "out", Client: mustURI(t, "https://static.example.com/"), Server: mustURI(t, "http://cdn.lan/s/"), Response: true},
		},
		Bypass:          []string{"http://internal.lan:8080/internal/raw/"},
		XFF:             true,
		XFProto:         true,
		RequestHeaders:  true,
		Content:         true,
		ResponseHeaders: true,
	}
}

func TestParseURI(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"http://a.example/", "http://a.example/", ""},
		{"HTTPS://A.example:443/x/", "https://a.example/x/", ""},
		{"http://a:8080/x/y/", "http://a:8080/x/y/", ""},
		{"http://a/x", "", "must begin and end with /"},
		{"http://a", "", "must end in /"},
		{"/x/", "", "not an absolute URI"},
		{"ftp://a/", "", "must be http or https"},
		{"http://a:0x/", "", "must be 1 to 65535"},
		{"http:///x/", "", "must be a host name"},
	} {
		u, err := ParseURI(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("%s: %v %v, want %s", c.in, u, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	p := testProfile(t)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	p.Rules = append(p.Rules, Rule{Name: "dup", Client: p.Rules[0].Client, Server: p.Rules[1].Server, Request: true})
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "app and dup") {
		t.Fatalf("duplicate client URI: %v", err)
	}
}

func TestMatchRequest(t *testing.T) {
	p := testProfile(t)
	for _, c := range []struct {
		scheme, host, path string
		want               int
	}{
		{"http", "www.example.com", "/app/x", 0},
		{"http", "WWW.example.com:80", "/app", 0},
		{"http", "www.example.com", "/apple", 1},
		{"http", "www.example.com", "/", 1},
		{"https", "www.example.com", "/app/", -1},
		{"http", "www.example.com:8080", "/app/", -1},
		{"http", "other.example.com", "/app/", -1},
		{"https", "static.example.com", "/", -1}, // response only
	} {
		if got := p.MatchRequest(c.scheme, c.host, c.path); got != c.want {
			t.Errorf("%s %s %s: rule %d, want %d", c.scheme, c.host, c.path, got, c.want)
		}
	}
}

func TestToClient(t *testing.T) {
	p := testProfile(t)
	for _, c := range []struct {
		in   string
		rule int
		want string // "" unchanged
	}{
		{"http://internal.lan:8080/internal/a?b=1", -1, "http://www.example.com/app/a?b=1"},
		{"http://INTERNAL.lan:8080/internal", -1, "http://www.example.com/app"},
		{"http://internal.lan/internal/a", -1, ""}, // port differs
		{"http://web.lan/x", -1, "http://www.example.com/x"},
		{"http://cdn.lan/s/img.png", -1, "https://static.example.com/img.png"},
		{"http://cdn.lan/other", -1, ""},
		{"//web.lan/x", -1, "//www.example.com/x"},
		{"/internal/next", 0, "/app/next"},
		{"/internal/next", -1, ""},
		{"/elsewhere", 0, ""},
		{"/x", 1, ""}, // same path on both sides
		{"relative/x", 0, ""},
		{"http://internal.lan:8080/internal/raw/file", -1, ""}, // bypass-list
		{"/internal/raw/file", 0, ""},
		{"mailto:a@b", 0, ""},
	} {
		got, ok := p.ToClient(c.in, c.rule)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s (rule %d): %q, want %q", c.in, c.rule, got, c.want)
		}
	}
}

func TestRewriteRequest(t *testing.T) {
	p := testProfile(t)
	client := netip.MustParseAddr("127.101.0.9")
	for _, c := range []struct {
		name, in, want string
		rule           int
	}{
		{"path and host",
			"GET /app/a/b?c=1 HTTP/1.1\r\nHost: www.example.com\r\nAccept-Encoding: gzip\r\nReferer: http://www.example.com/app/prev\r\nOrigin: http://www.example.com\r\n\r\n",
			"GET /internal/a/b?c=1 HTTP/1.1\r\nHost: internal.lan:8080\r\nReferer: http://internal.lan:8080/internal/prev\r\nOrigin: http://web.lan\r\nX-Forwarded-For: 127.101.0.9\r\nX-Forwarded-Proto: http\r\n\r\n", 0},
		{"absolute form",
			"GET http://www.example.com/app/ HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
			"GET /internal/ HTTP/1.1\r\nHost: internal.lan:8080\r\nX-Forwarded-For: 127.101.0.9\r\nX-Forwarded-Proto: http\r\n\r\n", 0},
		{"no rule: fields only",
			"GET /x HTTP/1.1\r\nHost: nobody.example\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n",
			"GET /x HTTP/1.1\r\nHost: nobody.example\r\nX-Forwarded-For: 127.101.0.9\r\nX-Forwarded-Proto: http\r\n\r\n", -1},
	} {
		r := p.RewriteRequest([]byte(c.in), "http", client)
		if string(r.Head) != c.want || r.Rule != c.rule {
			t.Errorf("%s:\n got %q rule %d\nwant %q rule %d", c.name, r.Head, r.Rule, c.want, c.rule)
		}
	}
}

func TestRewriteResponse(t *testing.T) {
	p := testProfile(t)
	for _, c := range []struct {
		name, in, want string
		body           BodyKind
	}{
		{"redirect",
			"HTTP/1.1 302 Found\r\nLocation: http://internal.lan:8080/internal/login\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 302 Found\r\nLocation: http://www.example.com/app/login\r\nContent-Length: 0\r\n\r\n", BodyNone},
		{"relative location, refresh, cookie, html",
			"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Location: /internal/index.html\r\nRefresh: 5; url=/internal/next\r\nSet-Cookie: s=1; Path=/internal/; Domain=internal.lan; HttpOnly\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Location: /app/index.html\r\nRefresh: 5; url=/app/next\r\nSet-Cookie: s=1; Path=/app/; Domain=www.example.com; HttpOnly\r\n\r\n", BodyHTML},
		{"gzip body untouched",
			"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Encoding: gzip\r\n\r\n", "", BodyNone},
		{"javascript", "HTTP/1.1 200 OK\r\nContent-Type: application/javascript\r\n\r\n", "", BodyJS},
		{"image", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n", "", BodyNone},
	} {
		r := p.RewriteResponse([]byte(c.in), 0)
		if string(r.Head) != c.want || r.Body != c.body {
			t.Errorf("%s:\n got %q body %d\nwant %q body %d", c.name, r.Head, r.Body, c.want, c.body)
		}
	}
}

func TestSetCookieRules(t *testing.T) {
	p := testProfile(t)
	p.Cookies = []CookieRule{{Name: "c", ClientDomain: "example.com", ClientPath: "/app/", ServerDomain: "internal.lan", ServerPath: "/internal/"}}
	for _, c := range []struct{ in, want string }{
		{"a=1; Domain=.internal.lan; Path=/internal/x", "a=1; Domain=example.com; Path=/app/x"},
		{"a=1; Path=/other/", ""},
		{"a=1", ""},
	} {
		got, ok := p.setCookie(c.in, 0)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRewriteBody(t *testing.T) {
	p := testProfile(t)
	for _, c := range []struct {
		name string
		kind BodyKind
		in   string
		want string // "" unchanged
	}{
		{"html links", BodyHTML,
			`<!DOCTYPE html><html><head><link rel="stylesheet" href="/internal/s.css"><meta http-equiv="refresh" content="0; url=http://internal.lan:8080/internal/x"></head>` +
				`<body><a href='http://internal.lan:8080/internal/a?x=1&amp;y=2' class=k>A</a> <img src=/elsewhere.png> <img srcset="/internal/a.png 1x, /internal/b.png 2x"><form action="/internal/post"></form></body></html>`,
			`<!DOCTYPE html><html><head><link rel="stylesheet" href="/app/s.css"><meta http-equiv="refresh" content="0; url=http://www.example.com/app/x"></head>` +
				`<body><a href="http://www.example.com/app/a?x=1&amp;y=2" class="k">A</a> <img src=/elsewhere.png> <img srcset="/app/a.png 1x, /app/b.png 2x"><form action="/app/post"></form></body></html>`},
		{"html script and style", BodyHTML,
			`<style>body{background:url("/internal/bg.png")}</style><script>var u = "/internal/api"; // "/internal/c"
fetch('http://internal.lan:8080/internal/x' + q)</script><p onclick="go('/internal/p')" style="background:url(/internal/i.png)">t</p>`,
			`<style>body{background:url("/app/bg.png")}</style><script>var u = "/app/api"; // "/internal/c"
fetch('http://www.example.com/app/x' + q)</script><p onclick="go(&#39;/app/p&#39;)" style="background:url(/app/i.png)">t</p>`},
		{"html unchanged", BodyHTML, `<p>plain <a href="/x">x</a></p>`, ""},
		{"css", BodyCSS, `@import "/internal/base.css"; @import url(/internal/b.css); .a{background:URL( '/internal/a.png' )} .b{background:url(data:image/png;base64,AA)}`,
			`@import "/app/base.css"; @import url(/app/b.css); .a{background:URL('/app/a.png')} .b{background:url(data:image/png;base64,AA)}`},
		{"js", BodyJS, "var a = \"see http://internal.lan:8080/internal/doc for more\", b = `/internal/t`, c = 'don\\'t', d = '/internal/';/* '/internal/' */",
			"var a = \"see http://www.example.com/app/doc for more\", b = `/app/t`, c = 'don\\'t', d = '/app/';/* '/internal/' */"},
		{"js unterminated", BodyJS, "var a = '/internal/x", ""},
		{"html cut in a tag", BodyHTML, `<a href='/internal/x'>t</a><img sr`, `<a href="/app/x">t</a><img sr`},
		{"html cut in a comment", BodyHTML, `<p>x</p><!-- unterminated`, ""},
		{"html cut in a script", BodyHTML, `<script>var a='/internal/x'`, `<script>var a='/app/x'`},
	} {
		got, ok := p.RewriteBody(nil, []byte(c.in), c.kind, 0)
		want := c.want
		if want == "" {
			if ok {
				t.Errorf("%s: changed to %q", c.name, got)
			}
			continue
		}
		if !ok || string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}
